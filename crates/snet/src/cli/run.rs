//! `snet run PROG.snet [SOURCES...]`: compile, bind boxes, run on records.

use clap::{Args, ValueEnum};
use snet::{EngineKind, Program};
use snet_core::{Engine, Record, RecordSink, RecordSource, RunError, RunOptions};
use std::fs::File;
use std::io::{BufReader, IsTerminal, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitCode;

use super::output::Output;
use super::prefetch::{CountsDiscarded, Prefetch};
use super::profile::Profile;
use super::progress::Progress;
use super::{fail, usage};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Record formats on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// The S-Net XML record format (spec §11).
    Xml,
    /// One JSON object per line (see the README).
    Json,
}

/// Arguments of `snet run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The S-Net program.
    pub(crate) program: PathBuf,
    /// Box implementations: C sources (`.c`), objects (`.o`), archives (`.a`) or shared
    /// objects (`.so`) defining the C4SNet boxes; headers (`.h`) add their directory to
    /// the include path.
    pub(crate) sources: Vec<PathBuf>,
    /// Read input records from FILE instead of standard input.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub(crate) input: Option<PathBuf>,
    /// Write output records to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Connect to HOST:PORT over TCP and write the output records to it (spec §11.1).
    #[arg(
        short = 'O',
        long = "output-tcp",
        value_name = "HOST:PORT",
        conflicts_with = "output"
    )]
    pub(crate) output_tcp: Option<String>,
    /// Accept one TCP connection on PORT and read the input records from it (spec
    /// §11.1's `-I PORT`; `-I NUMBER` means the same when NUMBER is not a directory).
    #[arg(long = "input-tcp", value_name = "PORT", conflicts_with = "input")]
    pub(crate) input_tcp: Option<u16>,
    /// Engine: front (work stealing, the default), lpel (user-level tasks, bounded
    /// streams), threads (one OS thread per box instance) or seq (the reference).
    #[arg(long, default_value = "front")]
    pub(crate) engine: String,
    /// front engine: input control, admit input only while `input <= A + B*output`,
    /// written "A + B*output" (or "A,B").
    #[arg(long, value_name = "BOUND")]
    pub(crate) input_limit: Option<String>,
    /// front engine: concurrent invocations per box instance (seed 003 §4.7), `K` for
    /// every box and/or `BOX=K` items, comma-separated (e.g. `4` or `1,work=8`); outputs
    /// keep stream order.
    #[arg(long, value_name = "K")]
    pub(crate) box_concurrency: Option<String>,
    /// front engine: how long (pause instructions, ~25 ns each here) a worker waits for
    /// a busy box before it queues the record it walks there (default 128).
    #[arg(long, value_name = "N")]
    pub(crate) walk_spin: Option<u32>,
    /// Worker threads (default: number of cores).
    #[arg(short = 'w', long = "workers")]
    pub(crate) workers: Option<usize>,
    /// Record format of input and output.
    #[arg(long, value_enum, default_value_t = Format::Xml)]
    pub(crate) format: Format,
    /// Print run statistics to standard error at the end.
    #[arg(long)]
    pub(crate) stats: bool,
    /// Show live figures on standard error while the run goes on: records in, out, in
    /// flight, rates per second, busiest boxes (redrawn in place on a terminal, a line
    /// per second otherwise). Off by default.
    #[arg(long)]
    pub(crate) progress: bool,
    /// Write per-box figures of the run (calls, busy time, records in and out; every
    /// engine, summed over each box's instances) as JSON to FILE.json, for
    /// `snet graph PROG.snet --profile FILE.json -o hot.svg`.
    #[arg(long, value_name = "FILE.json")]
    pub(crate) profile: Option<PathBuf>,
    /// Extra include directory for C box sources (repeatable). A number that is not a
    /// directory is spec §11.1's `-I PORT` (see `--input-tcp`).
    #[arg(short = 'I', value_name = "DIR")]
    pub(crate) include: Vec<PathBuf>,
    /// Extra C compiler flags, e.g. `--cflags "-O3 -DN=4"`.
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    pub(crate) cflags: Option<String>,
    /// Extra library to link with the C boxes (repeatable), e.g. `-l gmp`.
    #[arg(short = 'l', value_name = "LIB")]
    pub(crate) libs: Vec<String>,
    /// Options of the lpel engine.
    #[command(flatten)]
    pub(crate) lpel: Box<LpelArgs>,
}

/// Options of `--engine lpel` (other engines ignore them, but threads takes `--stream-capacity`).
#[derive(Debug, Args)]
pub(crate) struct LpelArgs {
    /// lpel and threads engines: records a box inbox holds before producers block.
    #[arg(long, value_name = "K")]
    pub(crate) stream_capacity: Option<usize>,
    /// lpel engine: monitoring level a|b|c|d (per-dispatch logs, seed 000 §5.4.3).
    #[arg(long, value_name = "LEVEL")]
    pub(crate) monitor: Option<String>,
    /// lpel engine: directory of the monitoring logs (default snet-monitor).
    #[arg(long, value_name = "DIR")]
    pub(crate) monitor_dir: Option<PathBuf>,
    /// lpel engine: task placement/migration, random[:P] or waiting-time[:WINDOW].
    #[arg(long, value_name = "STRATEGY")]
    pub(crate) placement: Option<String>,
    /// lpel and front engines: write a Chrome/Perfetto trace-event JSON of the run (seq
    /// and threads write none and say so; `--profile` works on every engine).
    #[arg(long, value_name = "FILE.json")]
    pub(crate) trace: Option<PathBuf>,
    /// lpel engine: task assignment, stages[:B] (default), round-robin, balanced or blocks[:B].
    #[arg(long, value_name = "POLICY")]
    pub(crate) assign: Option<String>,
    /// lpel engine: ready-queue scheduling, fifo or priority.
    #[arg(long, value_name = "POLICY")]
    pub(crate) sched: Option<String>,
}

/// Runs `snet run`.
pub(crate) fn run(mut args: RunArgs) -> ExitCode {
    if let Err(e) = split_tcp_port(&mut args) {
        return usage(e);
    }
    let Some(engine) = EngineKind::parse(&args.engine) else {
        let names: Vec<&str> = EngineKind::ALL.iter().map(|e| e.name()).collect();
        return usage(format!(
            "unknown engine `{}` (available: {})",
            args.engine,
            names.join(", ")
        ));
    };
    if args.workers == Some(0) {
        return usage("-w/--workers must be at least 1");
    }
    let mut prog = match Program::from_file(&args.program) {
        Ok(p) => p,
        Err(e) => {
            eprint!("{e}");
            return ExitCode::from(1);
        }
    };
    if !prog.compiled().warnings.is_empty() {
        eprint!("{}", prog.compiled().warnings.render());
    }
    if let Err(code) = bind_c_boxes(&mut prog, &args) {
        return code;
    }
    let unbound = prog.unbound_boxes();
    if !unbound.is_empty() {
        return fail(format!(
            "no implementation for box{} {}: pass the C sources that define {} on the command line",
            if unbound.len() > 1 { "es" } else { "" },
            unbound
                .iter()
                .map(|b| format!("`{b}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if unbound.len() > 1 { "them" } else { "it" }
        ));
    }

    let input: Box<dyn Read + Send> = match (&args.input, args.input_tcp) {
        (Some(p), _) => match File::open(p) {
            Ok(f) => Box::new(f),
            Err(e) => return fail(format!("cannot open input {}: {e}", p.display())),
        },
        (None, Some(port)) => match accept_one(port) {
            Ok(s) => Box::new(s),
            Err(e) => return fail(format!("cannot read input from TCP port {port}: {e}")),
        },
        (None, None) => Box::new(std::io::stdin()),
    };
    let out_file = match (&args.output, &args.output_tcp) {
        (Some(p), _) => match File::create(p) {
            Ok(f) => f,
            Err(e) => return fail(format!("cannot create output {}: {e}", p.display())),
        },
        (None, Some(addr)) => match TcpStream::connect(addr.as_str()) {
            // A socket is written like a pipe: each record at once (`is_stream`).
            Ok(s) => File::from(OwnedFd::from(s)),
            Err(e) => return fail(format!("cannot connect the output to {addr}: {e}")),
        },
        (None, None) => match std::io::stdout().as_fd().try_clone_to_owned() {
            Ok(fd) => File::from(fd),
            Err(e) => return fail(format!("cannot use standard output: {e}")),
        },
    };
    let streaming =
        out_file.is_terminal() || out_file.metadata().map(|m| is_stream(&m)).unwrap_or(true);
    // `Output` is a copyable handle: the sink writes through one copy, the end of the
    // run drains through this one.
    let output = Output::new(out_file, streaming);
    let reader = BufReader::with_capacity(1 << 16, input);
    let mut opts = RunOptions::default();
    if let Some(w) = args.workers {
        opts.workers = w.max(1);
    }
    // On more than one core, the input is parsed on a thread of its own (a file in
    // batches, a pipe or terminal one record at a time), also when every core runs a
    // worker: while the input is the bottleneck the workers are idle anyway, and
    // otherwise the reader parses ahead and blocks. Parsed by the workers themselves
    // (under the input lock), the parse serialised everything behind it: a 1-box
    // pipeline of 10^6 records took 0.78 s at 2 workers against 0.51 s at 1 (front;
    // 0.50 s with the reader thread), synchro 10000 0.08 s against 0.045 s.
    let cores = snet_core::engine::cores();
    let direct = Source::new(args.format, reader);
    let mut source = if cores > 1 {
        let batch = if input_is_regular_file(&args) { 256 } else { 1 };
        match Prefetch::start(direct, batch) {
            Ok(s) => Input::Prefetched(s),
            Err(e) => return fail(format!("cannot start the input reader: {e}")),
        }
    } else {
        Input::Direct(direct)
    };
    // The record writer hands over each record at once; `Output` decides when it
    // reaches the file (and writes it if a C box crashes).
    let mut sink = Sink::new(args.format, Box::new(output), true);
    let engine: Box<dyn Engine> = match engine {
        EngineKind::Lpel => {
            let cli = snet_lpel::snet_engine::CliOptions {
                stream_capacity: args.lpel.stream_capacity,
                monitor: args.lpel.monitor.clone(),
                monitor_dir: args.lpel.monitor_dir.clone(),
                placement: args.lpel.placement.clone(),
                trace: args.lpel.trace.clone(),
                assign: args.lpel.assign.clone(),
                sched: args.lpel.sched.clone(),
            };
            match snet_lpel::LpelConfig::from_cli(&cli) {
                Ok(cfg) => Box::new(snet_lpel::LpelEngine::new(cfg)),
                // A bad lpel option is a usage error, like every other bad option.
                Err(e) => return usage(e),
            }
        }
        EngineKind::Threads => {
            let defaults = snet_threads::ThreadsEngine::default();
            let stream_capacity = match args.lpel.stream_capacity {
                Some(0) => return usage("--stream-capacity must be at least 1"),
                Some(k) => k,
                None => defaults.stream_capacity,
            };
            Box::new(snet_threads::ThreadsEngine {
                stream_capacity,
                ..defaults
            })
        }
        EngineKind::Front => {
            let input_limit = match args.input_limit.as_deref().map(str::parse) {
                None => None,
                Some(Ok(l)) => Some(l),
                Some(Err(e)) => {
                    return usage(format!("--input-limit: {e}"));
                }
            };
            let box_concurrency = match args.box_concurrency.as_deref().map(str::parse) {
                None => Default::default(),
                Some(Ok(c)) => c,
                Some(Err(e)) => {
                    return usage(format!("--box-concurrency: {e}"));
                }
            };
            let defaults = snet_front::FrontOptions::default();
            let fo = snet_front::FrontOptions {
                input_limit,
                box_concurrency,
                walk_spin: args.walk_spin.unwrap_or(defaults.walk_spin),
                trace: args.lpel.trace.clone(),
                ..defaults
            };
            Box::new(snet_front::FrontEngine::new(fo))
        }
        other => other.engine(),
    };
    if args.lpel.trace.is_some() && matches!(engine.name(), "seq" | "threads") {
        eprintln!(
            "warning: --trace is written by the front and lpel engines only; the {} engine writes no trace (`--profile FILE.json` gives per-box figures on every engine)",
            engine.name()
        );
    }
    let figures = Figures::start(&mut prog, &args);
    let result = figures
        .run(&prog, &*engine, &mut source, &mut sink, &opts)
        .map_err(snet::Error::Run);
    if let Err(e) = figures.finish(&args, engine.name(), opts.workers) {
        eprintln!("warning: {e}");
    }
    match result {
        Ok(stats) => {
            let finish = sink.finish().and_then(|()| {
                output
                    .drain()
                    .map_err(|e| format!("cannot write the output: {e}"))
            });
            if stats.discarded_in_sync > 0 {
                eprintln!(
                    "warning: {} record(s) left in waiting synchrocells were discarded at the end of the run",
                    stats.discarded_in_sync
                );
            }
            if let Err(e) = finish {
                return fail(e);
            }
            if args.stats {
                eprintln!("{stats}");
                eprintln!("input discarded   {}", source.discarded());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            // A fatal run-time error ends the output without a terminate record (spec
            // §7.16: the terminate record marks a run that finished).
            let _ = sink.abandon();
            let _ = output.drain();
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

/// The run figures of `--profile` and `--progress`: the boxes are wrapped with
/// counters and the global input and output counted only when one of them is given.
struct Figures {
    profile: Option<Arc<Profile>>,
    progress: Option<Progress>,
}

impl Figures {
    fn start(prog: &mut Program, args: &RunArgs) -> Figures {
        if args.profile.is_none() && !args.progress {
            return Figures {
                profile: None,
                progress: None,
            };
        }
        let (p, table) = Profile::wrap(prog.net(), prog.boxes());
        prog.bind_table(&table);
        let p = Arc::new(p);
        let progress = args.progress.then(|| Progress::start(p.clone()));
        Figures {
            profile: Some(p),
            progress,
        }
    }

    fn run(
        &self,
        prog: &Program,
        engine: &dyn Engine,
        source: &mut dyn RecordSource,
        sink: &mut dyn RecordSink,
        opts: &RunOptions,
    ) -> Result<snet_core::RunStats, RunError> {
        let Some(p) = &self.profile else {
            return prog.run_on(engine, source, sink, opts);
        };
        let mut source = Counted {
            inner: source,
            n: p.records_in.clone(),
        };
        let mut sink = Counted {
            inner: sink,
            n: p.records_out.clone(),
        };
        prog.run_on(engine, &mut source, &mut sink, opts)
    }

    /// Stops the progress line and writes the profile file.
    fn finish(self, args: &RunArgs, engine: &str, workers: usize) -> Result<(), String> {
        if let Some(pr) = self.progress {
            pr.finish();
        }
        match (&self.profile, &args.profile) {
            (Some(p), Some(path)) => std::fs::write(path, p.to_json(engine, workers))
                .map_err(|e| format!("cannot write the profile {}: {e}", path.display())),
            _ => Ok(()),
        }
    }
}

/// A record source or sink that counts the records passing.
struct Counted<'a, T: ?Sized> {
    inner: &'a mut T,
    n: Arc<AtomicU64>,
}

impl RecordSource for Counted<'_, dyn RecordSource + '_> {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        let r = self.inner.next_record()?;
        if r.is_some() {
            self.n.fetch_add(1, Ordering::Relaxed);
        }
        Ok(r)
    }
}

impl RecordSink for Counted<'_, dyn RecordSink + '_> {
    fn write_record(&mut self, rec: Record) -> Result<(), RunError> {
        self.n.fetch_add(1, Ordering::Relaxed);
        self.inner.write_record(rec)
    }
}

/// Spec §11.1 `-I PORT`: waits for one TCP connection on PORT (any address) and
/// returns it; the listener closes once the connection is accepted.
fn accept_one(port: u16) -> std::io::Result<TcpStream> {
    let listener = TcpListener::bind(("0.0.0.0", port))?;
    let (stream, _) = listener.accept()?;
    Ok(stream)
}

/// Moves a `-I NUMBER` that is not an existing directory from the include list to
/// `input_tcp` (spec §11.1 names the TCP input port `-I`, which `snet run` also uses
/// for include directories, as C compilers do). Returns an error message for a second
/// port or a port given with `-i`.
fn split_tcp_port(args: &mut RunArgs) -> Result<(), String> {
    let mut keep = Vec::new();
    for dir in std::mem::take(&mut args.include) {
        let port = dir.to_str().and_then(|s| s.parse::<u16>().ok());
        match port {
            Some(p) if !dir.is_dir() => {
                if args.input_tcp.is_some() {
                    return Err(
                        "only one TCP input port (-I PORT / --input-tcp) may be given".into(),
                    );
                }
                args.input_tcp = Some(p);
            }
            _ => keep.push(dir),
        }
    }
    args.include = keep;
    if args.input_tcp.is_some() && args.input.is_some() {
        return Err("-i FILE and a TCP input port (-I PORT) cannot be used together".into());
    }
    Ok(())
}

#[cfg(unix)]
fn input_is_regular_file(args: &RunArgs) -> bool {
    if args.input_tcp.is_some() {
        return false;
    }
    let path = args
        .input
        .clone()
        .unwrap_or_else(|| PathBuf::from("/dev/stdin"));
    std::fs::metadata(path)
        .map(|m| m.is_file())
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn input_is_regular_file(args: &RunArgs) -> bool {
    args.input.is_some()
}

/// True for outputs read as they are written (pipes, sockets): each record is flushed
/// at once. Files and devices such as `/dev/null` are written in blocks.
#[cfg(unix)]
fn is_stream(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    t.is_fifo() || t.is_socket()
}

#[cfg(not(unix))]
fn is_stream(m: &std::fs::Metadata) -> bool {
    !m.is_file()
}

fn bind_c_boxes(prog: &mut Program, args: &RunArgs) -> Result<(), ExitCode> {
    let compiled = prog.compiled();
    let mut c_sigs = Vec::new();
    for (name, iface) in &compiled.box_interfaces {
        match iface.as_deref() {
            None | Some("C4SNet") => {
                if let Some(sig) = prog.net().boxes.iter().find(|b| &b.name == name) {
                    c_sigs.push(sig.clone());
                }
            }
            Some(other) => {
                return Err(fail(format!(
                    "box `{name}` uses the box language interface `{other}`, which snet does not support (only C4SNet)"
                )))
            }
        }
    }
    if c_sigs.is_empty() || args.sources.is_empty() {
        return Ok(());
    }
    if let Err(e) = snet_c4snet::install_crash_handler() {
        eprintln!("warning: cannot install the C box crash handler: {e}");
    }
    let opts = snet_c4snet::BuildOptions {
        include_dirs: args.include.clone(),
        cflags: args
            .cflags
            .as_deref()
            .map(snet_c4snet::split_flags)
            .unwrap_or_default(),
        libs: args.libs.clone(),
        ..Default::default()
    };
    match snet_c4snet::load_boxes(&c_sigs, &args.sources, &opts) {
        Ok(boxes) => {
            for w in boxes.warnings() {
                eprintln!("{w}");
            }
            prog.bind_table(&boxes.into_table());
            Ok(())
        }
        Err(e) => Err(fail(e)),
    }
}

/// Reads records, reporting and skipping malformed ones (spec §11.2 rule 11).
struct Source<R: Read + Send> {
    inner: SourceKind<R>,
    discarded: u64,
}

enum SourceKind<R: Read + Send> {
    Xml(snet_io::XmlReader<R>),
    Json(snet_io::JsonReader<R>),
}

impl<R: Read + Send> Source<R> {
    fn new(format: Format, r: R) -> Self {
        let inner = match format {
            Format::Xml => SourceKind::Xml(snet_io::XmlReader::new(r)),
            Format::Json => SourceKind::Json(snet_io::JsonReader::new(r)),
        };
        Source {
            inner,
            discarded: 0,
        }
    }
}

impl<R: Read + Send> CountsDiscarded for Source<R> {
    fn discarded(&self) -> u64 {
        self.discarded
    }
}

impl<R: Read + Send> RecordSource for Source<R> {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        loop {
            let item = match &mut self.inner {
                SourceKind::Xml(r) => r.next(),
                SourceKind::Json(r) => r.next(),
            };
            match item {
                None => return Ok(None),
                Some(Ok(rec)) => return Ok(Some(rec)),
                Some(Err(e)) if e.is_fatal() => {
                    return Err(RunError::new("global input", None, e.to_string()))
                }
                Some(Err(e)) => {
                    self.discarded += 1;
                    eprintln!("warning: {e}; record discarded");
                }
            }
        }
    }
}

/// The global input: read by the engine's own threads, or by a reader thread.
enum Input<R: Read + Send + 'static> {
    Direct(Source<R>),
    Prefetched(Prefetch),
}

impl<R: Read + Send + 'static> CountsDiscarded for Input<R> {
    fn discarded(&self) -> u64 {
        match self {
            Input::Direct(s) => s.discarded,
            Input::Prefetched(p) => p.discarded(),
        }
    }
}

impl<R: Read + Send + 'static> RecordSource for Input<R> {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        match self {
            Input::Direct(s) => s.next_record(),
            Input::Prefetched(p) => p.next_record(),
        }
    }
}

/// Writes records (spec §11.3), flushing after each record when the output streams.
struct Sink {
    inner: SinkKind,
}

enum SinkKind {
    Xml(snet_io::XmlWriter<Box<dyn Write + Send>>),
    Json(snet_io::JsonWriter<Box<dyn Write + Send>>),
}

impl Sink {
    fn new(format: Format, w: Box<dyn Write + Send>, flush_each: bool) -> Self {
        let inner = match format {
            Format::Xml => {
                let mut x = snet_io::XmlWriter::new(w);
                x.set_flush_each_record(flush_each);
                SinkKind::Xml(x)
            }
            Format::Json => {
                let mut j = snet_io::JsonWriter::new(w);
                j.set_flush_each_record(flush_each);
                SinkKind::Json(j)
            }
        };
        Sink { inner }
    }

    /// Writes the records emitted so far, without a terminate record.
    fn abandon(mut self) -> Result<(), String> {
        match &mut self.inner {
            SinkKind::Xml(w) => w.flush().map_err(|e| e.to_string()),
            SinkKind::Json(w) => w.flush().map_err(|e| e.to_string()),
        }
    }

    fn finish(self) -> Result<(), String> {
        match self.inner {
            SinkKind::Xml(w) => w.finish().map(|_| ()).map_err(|e| e.to_string()),
            SinkKind::Json(w) => w.finish().map(|_| ()).map_err(|e| e.to_string()),
        }
    }
}

impl RecordSink for Sink {
    fn write_record(&mut self, rec: Record) -> Result<(), RunError> {
        let r = match &mut self.inner {
            SinkKind::Xml(w) => w.write_record(&rec),
            SinkKind::Json(w) => w.write_record(&rec),
        };
        r.map_err(|e| RunError::new("global output", Some(format!("{rec:?}")), e.to_string()))
    }
}
