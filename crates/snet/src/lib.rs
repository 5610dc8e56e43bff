//! The `snet` facade: load an S-Net program, bind Rust closures (or C boxes) to its
//! boxes, and run it on any engine.
//!
//! ```no_run
//! use snet::{Program, BoxInput, BoxOutput, Arg, ArgExt, Value, Record, EngineKind};
//! let mut prog = Program::from_source("dec.snet", "net dec { box dec((A) -> (A) | (B)); } connect dec * {B};")?;
//! prog.bind("dec", |inp: &BoxInput, out: &mut BoxOutput| {
//!     let a = inp.int("A").unwrap_or(0);
//!     if a > 0 { out.emit(1, vec![Arg::int(a - 1)]) } else { out.emit(2, vec![Arg::int(0)]) }
//! })?;
//! let outputs = prog.run_records(EngineKind::Seq, vec![Record::new().with_field("A", Value::int(3))])?;
//! assert_eq!(outputs.len(), 1);
//! # Ok::<(), snet::Error>(())
//! ```

use snet_core::{BoxFn, Emitter, Engine, Label, LabelKind, RecordSink, RecordSource};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub mod dist;
pub use snet_core::{
    Arg, BoxFailure, BoxTable, Net, Record, RunError, RunOptions, RunStats, Value,
};

/// Errors of the facade: compile errors (rendered diagnostics), binding errors and
/// run-time errors.
#[derive(Debug)]
pub enum Error {
    /// The program does not compile; the rendered diagnostics.
    Compile(String),
    /// A box binding problem.
    Bind(String),
    /// A run-time error (spec §10).
    Run(RunError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Compile(d) => write!(f, "{d}"),
            Error::Bind(m) => write!(f, "error: {m}"),
            Error::Run(e) => write!(f, "error: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<RunError> for Error {
    fn from(e: RunError) -> Self {
        Error::Run(e)
    }
}

/// Which engine runs the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// The single-threaded reference engine.
    Seq,
    /// One OS thread per box instance (the classic runtime's model; the baseline).
    Threads,
    /// The work-stealing engine (seed 003 ch. 4).
    Front,
    /// User-level tasks with bounded streams (seeds 000, 004).
    Lpel,
}

impl EngineKind {
    /// All engines available in this build.
    pub const ALL: &'static [EngineKind] = &[
        EngineKind::Seq,
        EngineKind::Threads,
        EngineKind::Front,
        EngineKind::Lpel,
    ];

    /// Parses an `--engine` value.
    pub fn parse(s: &str) -> Option<EngineKind> {
        match s {
            "seq" => Some(EngineKind::Seq),
            "threads" => Some(EngineKind::Threads),
            "front" => Some(EngineKind::Front),
            "lpel" => Some(EngineKind::Lpel),
            _ => None,
        }
    }

    /// The name used by `--engine`.
    pub fn name(self) -> &'static str {
        self.engine().name()
    }

    /// The engine object.
    pub fn engine(self) -> Box<dyn Engine> {
        match self {
            EngineKind::Seq => Box::new(snet_core::SeqEngine),
            EngineKind::Threads => Box::new(snet_threads::ThreadsEngine::default()),
            EngineKind::Front => Box::new(snet_front::FrontEngine::default()),
            EngineKind::Lpel => Box::new(snet_lpel::LpelEngine::default()),
        }
    }
}

/// The input of one Rust box invocation: the box's input labels, by name.
#[derive(Debug)]
pub struct BoxInput<'a> {
    names: &'a [(LabelKind, &'static str)],
    args: &'a mut snet_core::Args,
}

impl BoxInput<'_> {
    fn position(&self, kind: LabelKind, name: &str) -> Option<usize> {
        self.names
            .iter()
            .position(|(k, n)| *k == kind && *n == name)
    }
    /// Field `name` (None if the box has no such input field or it is NULL).
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self.args.get(self.position(LabelKind::Field, name)?)? {
            Arg::Field(Some(v)) => Some(v),
            _ => None,
        }
    }
    /// Takes field `name` out of the input (to re-emit it without a copy).
    pub fn take_field(&mut self, name: &str) -> Option<Value> {
        let i = self.position(LabelKind::Field, name)?;
        match self.args.get_mut(i)? {
            Arg::Field(v) => v.take(),
            Arg::Tag(_) => None,
        }
    }
    /// The `int` scalar held by field `name`.
    pub fn int(&self, name: &str) -> Option<i32> {
        self.field(name)?.as_i32()
    }
    /// Tag `<name>`.
    pub fn tag(&self, name: &str) -> Option<i32> {
        match self.args.get(self.position(LabelKind::Tag, name)?)? {
            Arg::Tag(t) => Some(*t),
            Arg::Field(_) => None,
        }
    }
    /// Binding tag `<#name>`.
    pub fn btag(&self, name: &str) -> Option<i32> {
        match self.args.get(self.position(LabelKind::BTag, name)?)? {
            Arg::Tag(t) => Some(*t),
            Arg::Field(_) => None,
        }
    }
    /// All arguments in declaration order.
    pub fn args(&self) -> &[Arg] {
        self.args
    }
}

/// Emits records from a Rust box, by output variant (1-based, in declaration order).
pub struct BoxOutput<'a> {
    em: &'a mut dyn Emitter,
}

impl fmt::Debug for BoxOutput<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BoxOutput")
    }
}

impl BoxOutput<'_> {
    /// Emits a record of `variant` with one value per label of the variant, in order.
    /// Any iterable works: `vec![..]`, an array `[..]` (no allocation), an iterator.
    pub fn emit(
        &mut self,
        variant: usize,
        values: impl IntoIterator<Item = Arg>,
    ) -> Result<(), BoxFailure> {
        let mut values: snet_core::Args = values.into_iter().collect();
        self.em.emit_from(variant, &mut values)
    }
}

/// Convenience constructors for emitted values.
pub trait ArgExt {
    /// A field holding an `int` scalar.
    fn int(v: i32) -> Arg;
    /// A field holding a value.
    fn field(v: Value) -> Arg;
    /// A tag value.
    fn tag(v: i32) -> Arg;
}

impl ArgExt for Arg {
    fn int(v: i32) -> Arg {
        Arg::Field(Some(Value::int(v)))
    }
    fn field(v: Value) -> Arg {
        Arg::Field(Some(v))
    }
    fn tag(v: i32) -> Arg {
        Arg::Tag(v)
    }
}

struct RustBox<F> {
    /// Input label kinds and names in declaration order (looked up by name per call
    /// without touching the interner).
    names: Vec<(LabelKind, &'static str)>,
    f: F,
}

impl<F> BoxFn for RustBox<F>
where
    F: Fn(&BoxInput<'_>, &mut BoxOutput<'_>) -> Result<(), BoxFailure> + Send + Sync,
{
    fn invoke(&self, mut args: snet_core::Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self.invoke_from(&mut args, out)
    }

    fn invoke_from(
        &self,
        args: &mut snet_core::Args,
        out: &mut dyn Emitter,
    ) -> Result<(), BoxFailure> {
        let input = BoxInput {
            names: &self.names,
            args,
        };
        (self.f)(&input, &mut BoxOutput { em: out })
    }
}

/// A compiled S-Net program with its box bindings.
#[derive(Debug, Clone)]
pub struct Program {
    compiled: Arc<snet_lang::Compiled>,
    boxes: BoxTable,
}

impl Program {
    /// Compiles the program in `path` (entry network: the file's base name).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Program, Error> {
        let compiled =
            snet_lang::compile_file(path.as_ref()).map_err(|d| Error::Compile(d.render()))?;
        Ok(Program::new(compiled))
    }

    /// Compiles `source` as if read from a file named `file_name`.
    pub fn from_source(file_name: &str, source: &str) -> Result<Program, Error> {
        let compiled =
            snet_lang::compile_str(file_name, source).map_err(|d| Error::Compile(d.render()))?;
        Ok(Program::new(compiled))
    }

    fn new(compiled: snet_lang::Compiled) -> Program {
        Program {
            compiled: Arc::new(compiled),
            boxes: BoxTable::new(),
        }
    }

    /// The lowered network.
    pub fn net(&self) -> &Net {
        &self.compiled.net
    }

    /// The compiler output (signature, warnings, box interfaces).
    pub fn compiled(&self) -> &snet_lang::Compiled {
        &self.compiled
    }

    /// The current box bindings.
    pub fn boxes(&self) -> &BoxTable {
        &self.boxes
    }

    /// Adds bindings (e.g. C boxes loaded by `snet-c4snet`).
    pub fn bind_table(&mut self, table: &BoxTable) {
        for name in table.names() {
            if let Some(f) = table.get(name) {
                self.boxes.insert(name, f.clone());
            }
        }
    }

    /// Binds box `name` to a Rust function.
    pub fn bind<F>(&mut self, name: &str, f: F) -> Result<(), Error>
    where
        F: Fn(&BoxInput<'_>, &mut BoxOutput<'_>) -> Result<(), BoxFailure> + Send + Sync + 'static,
    {
        let sig = self
            .net()
            .boxes
            .iter()
            .find(|b| b.name == name)
            .cloned()
            .ok_or_else(|| Error::Bind(format!("the program has no box named `{name}`")))?;
        let names = sig
            .input
            .iter()
            .flatten()
            .map(|l: &Label| (l.kind(), l.name()))
            .collect();
        self.boxes.insert(name, Arc::new(RustBox { names, f }));
        Ok(())
    }

    /// Names of boxes the network uses that have no binding yet.
    pub fn unbound_boxes(&self) -> Vec<String> {
        self.net()
            .boxes
            .iter()
            .filter(|b| !self.boxes.contains(&b.name))
            .map(|b| b.name.clone())
            .collect()
    }

    /// Runs on `engine`, reading `input` and writing `output`.
    pub fn run(
        &self,
        engine: EngineKind,
        input: &mut dyn RecordSource,
        output: &mut dyn RecordSink,
        opts: &RunOptions,
    ) -> Result<RunStats, Error> {
        Ok(self.run_on(&*engine.engine(), input, output, opts)?)
    }

    /// Runs on an engine object configured by the caller (for instance
    /// `snet_front::FrontEngine::new(options)`), reading `input` and writing `output`.
    pub fn run_on(
        &self,
        engine: &dyn Engine,
        input: &mut dyn RecordSource,
        output: &mut dyn RecordSink,
        opts: &RunOptions,
    ) -> Result<RunStats, RunError> {
        if opts.workers > snet_core::engine::MAX_WORKERS {
            return Err(RunError::new(
                "run options",
                None,
                format!(
                    "{} workers asked for; at most {} are supported",
                    opts.workers,
                    snet_core::engine::MAX_WORKERS
                ),
            ));
        }
        engine.run(self.net(), &self.boxes, input, output, opts)
    }

    /// Runs on a configured engine object over a list of records with `workers`
    /// workers; returns the output records and the run's statistics.
    pub fn run_records_on(
        &self,
        engine: &dyn Engine,
        input: Vec<Record>,
        workers: usize,
    ) -> Result<(Vec<Record>, RunStats), RunError> {
        let mut out = Vec::new();
        let mut src = input.into_iter().fuse();
        let stats = self.run_on(engine, &mut src, &mut out, &RunOptions::new(workers))?;
        Ok((out, stats))
    }

    /// Runs on a list of records and returns the output records.
    pub fn run_records(
        &self,
        engine: EngineKind,
        input: Vec<Record>,
    ) -> Result<Vec<Record>, Error> {
        let mut out = Vec::new();
        let mut src = input.into_iter().fuse();
        self.run(engine, &mut src, &mut out, &RunOptions::default())?;
        Ok(out)
    }
}
