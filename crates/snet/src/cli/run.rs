//! `snet run PROG.snet [SOURCES...]`: compile, bind boxes, run on records.

use clap::{Args, ValueEnum};
use snet::{EngineKind, Program};
use snet_core::{Engine, Record, RecordSink, RecordSource, RunError, RunOptions};
#[cfg(feature = "mpi")]
use snet_dist::transport::Transport;
use std::fs::File;
use std::io::{BufReader, IsTerminal, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::output::{Output, Target};
use super::prefetch::{CountsDiscarded, Prefetch};
use super::profile::Profile;
use super::progress::Progress;
use super::{fail, usage};

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
    /// Run distributed (spec §16): `local:N` runs N nodes as thread groups of this
    /// process; `mpi` makes each MPI process a node (start with `mpirun -n N snet run
    /// --distrib mpi ...`; needs a build with `--features mpi`). Placements `@ n`,
    /// `!@ <t>` decide where entities run; node 0 reads the input and writes the output.
    #[arg(long, value_name = "local:N|mpi")]
    pub(crate) distrib: Option<String>,
    /// Distributed runs: records one node may have sent to another and not yet seen
    /// taken there (default 1024, and 2 MiB of payload); node 0 holds its input back while any node has a
    /// full window, so memory stays bounded however slow one node is.
    #[arg(long, value_name = "N")]
    pub(crate) dist_window: Option<u64>,
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

/// Runs `snet run`: a short sequence of named steps.
pub(crate) fn run(mut args: RunArgs) -> ExitCode {
    let (engine_kind, distrib) = match parse_options(&mut args) {
        Ok(x) => x,
        Err(code) => return code,
    };
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
    let c_boxes = match bind_c_boxes(&mut prog, &args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Err(code) = check_bound(&prog) {
        return code;
    }
    let make_engine = match engine_factory(&args, engine_kind, &prog) {
        Ok(m) => m,
        Err(code) => return code,
    };
    warn_ignored_options(&args, &*make_engine(0), distrib.is_some());
    // Under MPI, the transport starts now (after the C boxes were compiled: every rank
    // compiles its own): only node 0 touches the global input and output, the trace and
    // the profile (the other ranks never open `-i`, `-o`, `-I` or `-O`).
    #[cfg(feature = "mpi")]
    let mpi = match distrib {
        Some(Distrib::Mpi) => match start_mpi(c_boxes.as_ref()) {
            Ok(t) => Some(t),
            Err(e) => return fail(e),
        },
        _ => None,
    };
    #[cfg(feature = "mpi")]
    if let Some(t) = mpi.as_ref().filter(|t| t.rank() != 0) {
        let engine = make_engine(t.rank() as u32);
        return match run_mpi_node(t, c_boxes.as_ref(), &mut prog, &args, &*engine, None) {
            Ok(_) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(1),
        };
    }
    if let Err(code) = check_outputs_writable(&args, engine_kind) {
        return code;
    }
    let mut io = match open_io(&args) {
        Ok(io) => io,
        Err(code) => return code,
    };
    let discarded_seen = Arc::new(AtomicU64::new(0));
    let result = match distrib {
        None => run_one_process(&mut prog, &args, &*make_engine(0), &mut io, &discarded_seen),
        #[cfg(feature = "mpi")]
        Some(Distrib::Mpi) => {
            let t = mpi.as_ref().expect("MPI started above");
            let input: Box<dyn RecordSource> = Box::new(Counting {
                inner: std::mem::replace(&mut io.source, Input::Closed),
                seen: discarded_seen.clone(),
            });
            let engine = make_engine(0);
            let io = Some((input, &mut io.sink as &mut dyn RecordSink));
            run_mpi_node(t, c_boxes.as_ref(), &mut prog, &args, &*engine, io)
                .map_err(snet::Error::Run)
        }
        Some(Distrib::Local(n)) => {
            match run_local_nodes(
                &mut prog,
                &args,
                c_boxes.as_ref(),
                &make_engine,
                n,
                &mut io,
                &discarded_seen,
            ) {
                Ok(r) => r,
                Err(code) => return code,
            }
        }
    };
    report(result, io, &args, discarded_seen.load(Ordering::Relaxed))
}

/// A run in this process.
fn run_one_process(
    prog: &mut Program,
    args: &RunArgs,
    engine: &dyn Engine,
    io: &mut Io,
    discarded_seen: &AtomicU64,
) -> Result<snet::RunStats, snet::Error> {
    let figures = Figures::start(prog, args);
    let opts = match args.workers {
        Some(w) => RunOptions::new(w.max(1)),
        None => RunOptions::default(),
    };
    let r = figures
        .run(prog, engine, &mut io.source, &mut io.sink, &opts)
        .map_err(snet::Error::Run);
    if let Err(e) = figures.finish(args, engine.name(), opts.workers) {
        eprintln!("warning: {e}");
    }
    discarded_seen.store(io.source.discarded(), Ordering::Relaxed);
    r
}

/// `--distrib local:N`: N nodes as thread groups of this process, each with its own
/// copy of the box table (node k's C boxes see `node_location == k`, spec §12.1); the
/// figures of every node add up in one profile.
fn run_local_nodes(
    prog: &mut Program,
    args: &RunArgs,
    c_boxes: Option<&snet_c4snet::CBoxes>,
    make_engine: &EngineFactory,
    n: u32,
    io: &mut Io,
    discarded_seen: &Arc<AtomicU64>,
) -> Result<Result<snet::RunStats, snet::Error>, ExitCode> {
    let figures = Figures::start(prog, args);
    let mut tables = node_tables(prog, c_boxes, n).map_err(fail)?;
    if let Some(p) = &figures.profile {
        for (node, t) in tables.iter_mut().enumerate() {
            *t = p.wrap_shared(prog.net(), t, node as u32);
        }
    }
    let mut input: Box<dyn RecordSource> = Box::new(Counting {
        inner: std::mem::replace(&mut io.source, Input::Closed),
        seen: discarded_seen.clone(),
    });
    let mut sink: &mut dyn RecordSink = &mut io.sink;
    let mut counted_sink;
    if let Some(p) = &figures.profile {
        input = Box::new(CountedBox {
            inner: input,
            n: p.records_in.clone(),
        });
        counted_sink = Counted {
            inner: sink,
            n: p.records_out.clone(),
        };
        sink = &mut counted_sink;
    }
    let results = snet::dist::run_local(
        prog.net(),
        &tables,
        &|node| make_engine(node),
        n,
        input,
        sink,
        workers(args),
        flow_config(args),
    );
    if let Err(e) = figures.finish(args, make_engine(0).name(), workers(args)) {
        eprintln!("warning: {e}");
    }
    if args.stats {
        for (i, r) in results.iter().enumerate() {
            if let Ok(st) = r {
                eprintln!("{}", node_line(i, st));
            }
        }
    }
    Ok(merge_results(results).map_err(snet::Error::Run))
}

/// Step 1: the options alone (engine, workers, `--distrib`, the TCP port).
fn parse_options(args: &mut RunArgs) -> Result<(EngineKind, Option<Distrib>), ExitCode> {
    split_tcp_port(args).map_err(usage)?;
    if let Some(e) = super::program_first(&args.program, &args.sources) {
        return Err(usage(e));
    }
    let Some(engine_kind) = EngineKind::parse(&args.engine) else {
        return Err(usage(super::unknown_engine(&args.engine)));
    };
    if args.workers == Some(0) {
        return Err(usage("-w/--workers must be at least 1"));
    }
    if let Some(w) = args.workers.filter(|w| *w > snet_core::engine::MAX_WORKERS) {
        return Err(usage(format!(
            "-w {w}: at most {} workers are supported (this machine has {} cores)",
            snet_core::engine::MAX_WORKERS,
            snet_core::engine::cores()
        )));
    }
    if args.dist_window == Some(0) {
        return Err(usage("--dist-window must be at least 1"));
    }
    let distrib = args
        .distrib
        .as_deref()
        .map(parse_distrib)
        .transpose()
        .map_err(usage)?;
    Ok((engine_kind, distrib))
}

/// The worker count of each engine (node).
fn workers(args: &RunArgs) -> usize {
    args.workers
        .map(|w| w.max(1))
        .unwrap_or_else(snet_core::engine::cores)
}

/// The flow control of a distributed run (`--dist-window`).
fn flow_config(args: &RunArgs) -> snet::dist::FlowConfig {
    let d = snet::dist::FlowConfig::default();
    snet::dist::FlowConfig {
        window: args.dist_window.unwrap_or(d.window),
        ..d
    }
}

/// Every box has an implementation.
fn check_bound(prog: &Program) -> Result<(), ExitCode> {
    let unbound = prog.unbound_boxes();
    if unbound.is_empty() {
        return Ok(());
    }
    Err(fail(format!(
        "no implementation for box{} {}: pass the C sources that define {} on the command line",
        if unbound.len() > 1 { "es" } else { "" },
        unbound
            .iter()
            .map(|b| format!("`{b}`"))
            .collect::<Vec<_>>()
            .join(", "),
        if unbound.len() > 1 { "them" } else { "it" }
    )))
}

/// Every output file is checked before any record is read: a run must not do its work
/// and then find it cannot write the trace (or lose its terminate record over it).
/// (seq and threads write no trace: a warning says so, and no file is made.)
fn check_outputs_writable(args: &RunArgs, engine_kind: EngineKind) -> Result<(), ExitCode> {
    let writes_trace = matches!(engine_kind, EngineKind::Front | EngineKind::Lpel);
    if let Some(p) = args.lpel.trace.as_ref().filter(|_| writes_trace) {
        if let Err(e) = File::create(p) {
            return Err(fail(format!(
                "cannot create the trace file {}: {e}",
                p.display()
            )));
        }
    }
    if let Some(p) = &args.profile {
        if let Err(e) = File::create(p) {
            return Err(fail(format!(
                "cannot create the profile {}: {e}",
                p.display()
            )));
        }
    }
    Ok(())
}

/// The global input and output of a run (node 0's, in a distributed one).
struct Io {
    source: Input<BufReader<Box<dyn Read + Send>>>,
    sink: Sink,
    /// A copyable handle: the sink writes through one copy, the end of the run drains
    /// through this one.
    output: Output,
}

/// Opens the global input and output (`-i`/`-I`, `-o`/`-O`, or the standard streams).
fn open_io(args: &RunArgs) -> Result<Io, ExitCode> {
    let input: Box<dyn Read + Send> = match (&args.input, args.input_tcp) {
        (Some(p), _) => match File::open(p) {
            Ok(f) => Box::new(f),
            Err(e) => return Err(fail(format!("cannot open input {}: {e}", p.display()))),
        },
        (None, Some(port)) => match accept_one(port) {
            Ok(s) => Box::new(s),
            Err(e) => return Err(fail(format!("cannot read input from TCP port {port}: {e}"))),
        },
        (None, None) => {
            super::note_terminal_input();
            Box::new(std::io::stdin())
        }
    };
    let out_file: Target = match (&args.output, &args.output_tcp) {
        (Some(p), _) => match File::create(p) {
            Ok(f) => f.into(),
            Err(e) => return Err(fail(format!("cannot create output {}: {e}", p.display()))),
        },
        (None, Some(addr)) => match TcpStream::connect(addr.as_str()) {
            Ok(s) => s.into(),
            Err(e) => return Err(fail(format!("cannot connect the output to {addr}: {e}"))),
        },
        (None, None) => match std::io::stdout().as_fd().try_clone_to_owned() {
            Ok(fd) => File::from(fd).into(),
            Err(e) => return Err(fail(format!("cannot use standard output: {e}"))),
        },
    };
    let streaming = match &out_file {
        // A socket is written like a pipe: each record at once.
        Target::Tcp(_) => true,
        Target::File(f) => f.is_terminal() || f.metadata().map(|m| is_stream(&m)).unwrap_or(true),
    };
    let output = Output::new(out_file, streaming);
    output.flush_every(super::output::FLUSH_EVERY);
    let reader = BufReader::with_capacity(1 << 16, input);
    // On more than one core, the input is parsed on a thread of its own (a file in
    // batches, a pipe or terminal one record at a time), also when every core runs a
    // worker: while the input is the bottleneck the workers are idle anyway, and
    // otherwise the reader parses ahead and blocks. Parsed by the workers themselves
    // (under the input lock), the parse serialised everything behind it: a 1-box
    // pipeline of 10^6 records took 0.78 s at 2 workers against 0.51 s at 1 (front;
    // 0.50 s with the reader thread), synchro 10000 0.08 s against 0.045 s.
    let direct = Source::new(args.format, reader);
    let source = if snet_core::engine::cores() > 1 {
        let batch = if input_is_regular_file(args) { 256 } else { 1 };
        match Prefetch::start(direct, batch) {
            Ok(s) => Input::Prefetched(s),
            Err(e) => return Err(fail(format!("cannot start the input reader: {e}"))),
        }
    } else {
        Input::Direct(direct)
    };
    // The record writer hands over each record at once; `Output` decides when it
    // reaches the file (and writes it if a C box crashes).
    let sink = Sink::new(args.format, Box::new(output), true);
    Ok(Io {
        source,
        sink,
        output,
    })
}

/// Makes the engine of each node (every node of a local distributed run needs one of
/// its own; node k > 0 of a distributed run writes its trace to its own file).
type EngineFactory = Box<dyn Fn(u32) -> Box<dyn Engine> + Sync>;

fn engine_factory(
    args: &RunArgs,
    engine_kind: EngineKind,
    prog: &Program,
) -> Result<EngineFactory, ExitCode> {
    Ok(match engine_kind {
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
                Ok(cfg) => Box::new(move |node| {
                    let mut cfg = cfg.clone();
                    cfg.trace_file = cfg.trace_file.map(|p| node_file(&p, node));
                    Box::new(snet_lpel::LpelEngine::new(cfg))
                }),
                // A bad lpel option is a usage error, like every other bad option.
                Err(e) => return Err(usage(e)),
            }
        }
        EngineKind::Threads => {
            let defaults = snet_threads::ThreadsEngine::default();
            let stream_capacity = match args.lpel.stream_capacity {
                Some(0) => return Err(usage("--stream-capacity must be at least 1")),
                Some(k) => k,
                None => defaults.stream_capacity,
            };
            let e = snet_threads::ThreadsEngine {
                stream_capacity,
                ..defaults
            };
            Box::new(move |_| Box::new(e))
        }
        EngineKind::Front => {
            let input_limit = match args.input_limit.as_deref().map(str::parse) {
                None => None,
                Some(Ok(l)) => Some(l),
                Some(Err(e)) => return Err(usage(format!("--input-limit: {e}"))),
            };
            let box_concurrency: snet_front::BoxConcurrency =
                match args.box_concurrency.as_deref().map(str::parse) {
                    None => Default::default(),
                    Some(Ok(c)) => c,
                    Some(Err(e)) => return Err(usage(format!("--box-concurrency: {e}"))),
                };
            for (n, _) in &box_concurrency.by_name {
                if !prog.net().boxes.iter().any(|b| &b.name == n) {
                    eprintln!(
                        "warning: --box-concurrency names `{n}`, which is not a box of the program"
                    );
                }
            }
            let defaults = snet_front::FrontOptions::default();
            let fo = snet_front::FrontOptions {
                input_limit,
                box_concurrency,
                walk_spin: args.walk_spin.unwrap_or(defaults.walk_spin),
                trace: args.lpel.trace.clone(),
                ..defaults
            };
            Box::new(move |node| {
                let mut fo = fo.clone();
                fo.trace = fo.trace.map(|p| node_file(&p, node));
                Box::new(snet_front::FrontEngine::new(fo))
            })
        }
        other => Box::new(move |_| other.engine()),
    })
}

/// The file of node `node` for a per-node output named `path`: `path` itself on node
/// 0, `NAME.nodeK.EXT` on node K (`trace.json` → `trace.node2.json`).
pub(crate) fn node_file(path: &std::path::Path, node: u32) -> PathBuf {
    if node == 0 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.node{node}.{}", ext.to_string_lossy()),
        None => format!("{stem}.node{node}"),
    };
    path.with_file_name(name)
}

/// Options for another engine are ignored: say so (a run that seems to honour an option
/// it never read misleads more than a warning).
fn warn_ignored_options(args: &RunArgs, engine: &dyn Engine, distributed: bool) {
    let name = engine.name();
    let l = &args.lpel;
    let ignored: Vec<&str> = [
        (
            "--stream-capacity",
            l.stream_capacity.is_some(),
            &["lpel", "threads"][..],
        ),
        ("--monitor", l.monitor.is_some(), &["lpel"][..]),
        ("--monitor-dir", l.monitor_dir.is_some(), &["lpel"][..]),
        ("--placement", l.placement.is_some(), &["lpel"][..]),
        ("--assign", l.assign.is_some(), &["lpel"][..]),
        ("--sched", l.sched.is_some(), &["lpel"][..]),
        ("--input-limit", args.input_limit.is_some(), &["front"][..]),
        (
            "--box-concurrency",
            args.box_concurrency.is_some(),
            &["front"][..],
        ),
        ("--walk-spin", args.walk_spin.is_some(), &["front"][..]),
    ]
    .into_iter()
    .filter(|(_, given, engines)| *given && !engines.contains(&name))
    .map(|(flag, _, _)| flag)
    .collect();
    if !ignored.is_empty() {
        eprintln!(
            "warning: {} {} not apply to the {name} engine and {} ignored",
            ignored.join(", "),
            if ignored.len() == 1 { "does" } else { "do" },
            if ignored.len() == 1 { "is" } else { "are" },
        );
    }
    if args.lpel.trace.is_some() && matches!(name, "seq" | "threads") {
        eprintln!(
            "warning: --trace is written by the front and lpel engines only; the {name} engine writes no trace (`--profile FILE.json` gives per-box figures on every engine)",
        );
    }
    if args.dist_window.is_some() && !distributed {
        eprintln!(
            "warning: --dist-window applies to distributed runs (--distrib) only and is ignored"
        );
    }
}

/// The last step: finish the output, print the statistics, choose the exit status.
fn report(
    result: Result<snet::RunStats, snet::Error>,
    io: Io,
    args: &RunArgs,
    discarded: u64,
) -> ExitCode {
    let Io { sink, output, .. } = io;
    match result {
        Ok(stats) => {
            let finish = sink.finish().and_then(|()| {
                output
                    .drain()
                    .map_err(|e| format!("cannot write the output: {e}"))
            });
            for w in &stats.warnings {
                eprintln!("warning: {w}");
            }
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
                eprintln!("input discarded   {discarded}");
            }
            if discarded > 0 {
                // The run went on without them (spec §11.2 rule 11), but its output
                // is not the output of the whole input: not a success.
                return fail(format!(
                    "{discarded} input record{} malformed and discarded (see the warnings above); the output lacks what {} would have produced",
                    if discarded == 1 { " was" } else { "s were" },
                    if discarded == 1 { "it" } else { "they" }
                ));
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

/// How a distributed run is carried (`--distrib`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Distrib {
    /// N nodes as thread groups of this process.
    Local(u32),
    /// Each MPI process is a node (only in a build with the `mpi` feature: without it
    /// `--distrib mpi` is a usage error).
    #[cfg(feature = "mpi")]
    Mpi,
}

/// The box tables of `n` in-process nodes: the program's, with each node's C boxes
/// from a private copy of their library (`node_location` = the node, spec §12.1).
fn node_tables(
    prog: &Program,
    c_boxes: Option<&snet_c4snet::CBoxes>,
    n: u32,
) -> Result<Vec<snet::BoxTable>, String> {
    let Some(c) = c_boxes else {
        return Ok(vec![prog.boxes().clone()]);
    };
    (0..n)
        .map(|k| {
            let copy = if k == 0 {
                c.set_node_location(0).map(|()| c.clone())
            } else {
                c.node_copy(k)
            };
            let copy = copy.map_err(|e| format!("node {k}: {e}"))?;
            let mut t = prog.boxes().clone();
            for name in copy.table().names() {
                if let Some(f) = copy.table().get(name) {
                    t.insert(name, f.clone());
                }
            }
            Ok(t)
        })
        .collect()
}

/// One node's `--stats` line of a distributed run (bytes when records were encoded,
/// i.e. between processes).
fn node_line(node: usize, st: &snet::RunStats) -> String {
    let mut line = format!(
        "node {node}: box calls {}, records sent {}, received {}, in {}, out {}, entities {}",
        st.box_calls,
        st.records_sent,
        st.records_received,
        st.records_in,
        st.records_out,
        st.entities_created
    );
    if st.bytes_sent + st.bytes_received > 0 {
        line.push_str(&format!(
            ", bytes sent {}, received {}",
            st.bytes_sent, st.bytes_received
        ));
    }
    line
}

/// A fingerprint of the program and the box code (spec §16.3: every node must run the
/// same; the ranks of an MPI run compare theirs): the program, the sources, the compiler
/// flags, libraries and include directories, and the shared object built from them
/// (which also covers the headers the sources include).
#[cfg(feature = "mpi")]
fn fingerprint(args: &RunArgs, c_boxes: Option<&snet_c4snet::CBoxes>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in std::iter::once(&args.program).chain(&args.sources) {
        std::fs::read(p).unwrap_or_default().hash(&mut h);
    }
    args.cflags.hash(&mut h);
    args.libs.hash(&mut h);
    args.include.hash(&mut h);
    if let Some(c) = c_boxes {
        std::fs::read(c.library_path())
            .unwrap_or_default()
            .hash(&mut h);
    }
    h.finish()
}

/// Starts the MPI transport (this process is one rank) and tells the C boxes their
/// node.
#[cfg(feature = "mpi")]
fn start_mpi(
    c_boxes: Option<&snet_c4snet::CBoxes>,
) -> Result<Arc<snet_dist::transport::MpiTransport>, String> {
    use snet_dist::transport::{MpiTransport, Transport};
    let t = MpiTransport::init().map_err(|e| format!("MPI: {e}"))?;
    let rank = t.rank() as u32;
    snet_c4snet::set_crash_node(rank);
    if let Some(c) = c_boxes {
        c.set_node_location(rank)
            .map_err(|e| format!("node {rank}: {e}"))?;
    }
    Ok(t)
}

/// This process's node of an MPI run: node 0 gets the global input and output
/// (`io`), the others `None`. A failure ends every rank (`MPI_Abort`).
#[cfg(feature = "mpi")]
fn run_mpi_node(
    t: &Arc<snet_dist::transport::MpiTransport>,
    c_boxes: Option<&snet_c4snet::CBoxes>,
    prog: &mut Program,
    args: &RunArgs,
    engine: &dyn Engine,
    io: Option<(Box<dyn RecordSource>, &mut dyn RecordSink)>,
) -> Result<snet::RunStats, RunError> {
    let rank = t.rank() as u32;
    // Every node counts its boxes for `--profile` (node 0 adds the others' at the
    // end); the progress line is node 0's.
    let figures = Figures::start_with(
        prog,
        args.profile.is_some() || args.progress,
        args.progress && rank == 0,
    );
    // `--progress`: the other nodes report their boxes every second, node 0 shows them.
    let live = match (&figures.profile, args.progress) {
        (Some(p), true) => {
            let (mine, all) = (p.clone(), p.clone());
            Some(snet::dist::transport::LiveProgress {
                report: Arc::new(move || mine.box_values()),
                receive: Arc::new(move |node, v| all.set_live(node, v)),
            })
        }
        _ => None,
    };
    let transport: Arc<dyn Transport> = t.clone();
    let (input, output) = match io {
        Some((i, o)) => (Some(i), Some(o)),
        None => (None, None),
    };
    let input = match (&figures.profile, input) {
        (Some(p), Some(i)) => Some(Box::new(CountedBox {
            inner: i,
            n: p.records_in.clone(),
        }) as Box<dyn RecordSource>),
        (_, i) => i,
    };
    let mut counted_sink;
    let output: Option<&mut dyn RecordSink> = match output {
        Some(o) => {
            counted_sink = Counted {
                inner: o,
                n: figures
                    .profile
                    .as_ref()
                    .map(|p| p.records_out.clone())
                    .unwrap_or_default(),
            };
            Some(&mut counted_sink)
        }
        None => None,
    };
    let profile = figures.profile.clone();
    let extra = move || profile.as_ref().map(|p| p.box_values()).unwrap_or_default();
    let r = snet::dist::transport::run_node(
        transport,
        prog.net(),
        prog.boxes(),
        engine,
        input,
        output,
        workers(args),
        fingerprint(args, c_boxes),
        flow_config(args),
        &extra,
        live,
    );
    match r {
        Ok((st, others)) => {
            let _ = t.finish();
            // Node 0 prints every node's line and the totals (as `local:N` does), and
            // writes the profile of every node's boxes.
            if rank != 0 {
                return Ok(st);
            }
            let mut all = vec![Ok(st)];
            for (k, o) in others.into_iter().enumerate() {
                match o {
                    Some(v) => {
                        let n = snet::dist::STATS_VALUES.min(v.len());
                        if let Some(p) = &figures.profile {
                            p.add_box_values(k as u32 + 1, &v[n..]);
                        }
                        all.push(Ok(snet::dist::stats_from_values(&v[..n])));
                    }
                    None => eprintln!(
                        "warning: node {}'s figures did not reach node 0; the totals lack them",
                        k + 1
                    ),
                }
            }
            if let Err(e) = figures.finish(args, engine.name(), workers(args)) {
                eprintln!("warning: {e}");
            }
            if args.stats {
                for (i, r) in all.iter().enumerate() {
                    if let Ok(st) = r {
                        eprintln!("{}", node_line(i, st));
                    }
                }
            }
            merge_results(all)
        }
        Err(e) => {
            // Every rank ends at once (spec §16.6): the others are told, then MPI
            // ends the job. The message names the node once.
            let msg = e.to_string();
            if msg.starts_with(&format!("node {rank}")) {
                eprintln!("error: {msg}");
            } else {
                eprintln!("error: node {rank}: {msg}");
            }
            t.abort(1);
            Err(e)
        }
    }
}

fn parse_distrib(s: &str) -> Result<Distrib, String> {
    if let Some(n) = s.strip_prefix("local:") {
        return match n.parse::<u32>() {
            Ok(n) if (1..=1024).contains(&n) => Ok(Distrib::Local(n)),
            _ => Err(format!(
                "--distrib local:N: N must be a number of nodes from 1 to 1024, not `{n}`"
            )),
        };
    }
    if s == "mpi" {
        #[cfg(feature = "mpi")]
        return Ok(Distrib::Mpi);
        #[cfg(not(feature = "mpi"))]
        return Err("--distrib mpi: this snet was built without MPI; build it with `cargo build --release --features mpi` (needs Open MPI and libclang)".into());
    }
    Err(format!("--distrib `{s}`: expected `local:N` or `mpi`"))
}

/// The outcome of a distributed run as one result: node 0's statistics with the box
/// calls, entities and records moved of every node added; the first failure (the one
/// that caused the others, if it can be told) otherwise.
fn merge_results(results: Vec<snet::dist::NodeResult>) -> Result<snet::RunStats, snet::RunError> {
    let mut errors: Vec<snet::RunError> = results
        .iter()
        .filter_map(|r| r.as_ref().err().cloned())
        .collect();
    if !errors.is_empty() {
        // A node that failed on its own comes before those told of it.
        errors.sort_by_key(|e| e.message.starts_with("the run failed there"));
        return Err(errors.remove(0));
    }
    let mut it = results.into_iter().flatten();
    let mut total = it.next().unwrap_or_default();
    for st in it {
        total.box_calls += st.box_calls;
        total.entities_created += st.entities_created;
        total.records_sent += st.records_sent;
        total.records_received += st.records_received;
        total.records_created += st.records_created;
        total.records_consumed += st.records_consumed;
        total.records_stored += st.records_stored;
        total.sync_merges += st.sync_merges;
        total.discarded_in_sync += st.discarded_in_sync;
        total.warnings.extend(st.warnings.iter().cloned());
    }
    Ok(total)
}

/// A source that keeps its count of discarded records where the CLI can read it after
/// the source has moved to another thread.
struct Counting<S> {
    inner: S,
    seen: Arc<AtomicU64>,
}

impl<S: RecordSource + CountsDiscarded> RecordSource for Counting<S> {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        let r = self.inner.next_record();
        self.seen.store(self.inner.discarded(), Ordering::Relaxed);
        r
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
        Figures::start_with(prog, args.profile.is_some(), args.progress)
    }

    /// Counts the boxes if `profile` or `progress`; shows the progress line if
    /// `progress`.
    fn start_with(prog: &mut Program, profile: bool, progress: bool) -> Figures {
        if !profile && !progress {
            return Figures {
                profile: None,
                progress: None,
            };
        }
        let (p, table) = Profile::wrap(prog.net(), prog.boxes());
        prog.bind_table(&table);
        let p = Arc::new(p);
        let progress = progress.then(|| Progress::start(p.clone()));
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

/// A boxed record source that counts the records passing.
struct CountedBox {
    inner: Box<dyn RecordSource>,
    n: Arc<AtomicU64>,
}

impl RecordSource for CountedBox {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        let r = self.inner.next_record()?;
        if r.is_some() {
            self.n.fetch_add(1, Ordering::Relaxed);
        }
        Ok(r)
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

fn bind_c_boxes(
    prog: &mut Program,
    args: &RunArgs,
) -> Result<Option<snet_c4snet::CBoxes>, ExitCode> {
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
        return Ok(None);
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
            prog.bind_table(boxes.table());
            Ok(Some(boxes))
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
                None => {
                    // Text only, no `<record` at all (a wrong file, binary data): say
                    // so rather than run on nothing and exit 0.
                    if let SourceKind::Xml(r) = &self.inner {
                        if r.records_seen() == 0 && r.junk_bytes() > 0 {
                            let hint = if r.looks_like_json() {
                                "it looks like JSON lines: read it with --format json"
                            } else {
                                "is this an S-Net XML record file?"
                            };
                            return Err(RunError::new(
                                "global input",
                                None,
                                format!(
                                    "no S-Net record in the input: {} bytes were read and none is a `<record ...>` element (spec §11.2); {hint}",
                                    r.offset()
                                ),
                            ));
                        }
                    }
                    return Ok(None);
                }
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
    /// Handed to a distributed run's reader (which counts what it discards).
    Closed,
}

impl<R: Read + Send + 'static> CountsDiscarded for Input<R> {
    fn discarded(&self) -> u64 {
        match self {
            Input::Direct(s) => s.discarded,
            Input::Prefetched(p) => p.discarded(),
            Input::Closed => 0,
        }
    }
}

impl<R: Read + Send + 'static> RecordSource for Input<R> {
    fn next_record(&mut self) -> Result<Option<Record>, RunError> {
        match self {
            Input::Direct(s) => s.next_record(),
            Input::Prefetched(p) => p.next_record(),
            Input::Closed => Ok(None),
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
