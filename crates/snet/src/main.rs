//! `snet` command-line interface: `check`, `graph`, `stubs`, `run`, `trace`, `observe`, `bench`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// With the `jemalloc` feature, the program's allocator (see `Cargo.toml`).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

// The CLI's printing never panics: these shadow the standard macros in this crate
// (std's panic when the stream cannot be written, e.g. `snet check p.snet > /dev/full`).
// A failed write to standard output is remembered and turns the exit status into 1 with
// a message (see `main`); a failed write to standard error is dropped, as there is
// nowhere left to report it.
macro_rules! print {
    ($($t:tt)*) => { $crate::cli::term::out(format_args!($($t)*)) };
}
macro_rules! println {
    () => { $crate::cli::term::out(format_args!("\n")) };
    ($($t:tt)*) => { $crate::cli::term::out(format_args!("{}\n", format_args!($($t)*))) };
}
macro_rules! eprint {
    ($($t:tt)*) => { $crate::cli::term::err(format_args!($($t)*)) };
}
macro_rules! eprintln {
    () => { $crate::cli::term::err(format_args!("\n")) };
    ($($t:tt)*) => { $crate::cli::term::err(format_args!("{}\n", format_args!($($t)*))) };
}

mod cli;

/// S-Net: check, draw and run S-Net coordination programs.
#[derive(Debug, Parser)]
#[command(name = "snet", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Type-check a program and print the entry network's inferred signature.
    Check(cli::check::CheckArgs),
    /// Write the static network as Graphviz DOT, or as an SVG picture (`-o net.svg`),
    /// optionally with the figures of a `snet run --profile`.
    Graph(cli::graph::GraphArgs),
    /// Print the C prototype of each C box of a program, with a skeleton body.
    Stubs(cli::stubs::StubsArgs),
    /// Run a program on records (XML by default), with C boxes from SOURCES.
    Run(Box<cli::run::RunArgs>),
    /// Summarise a trace written by `snet run --trace`: per worker and per box or task.
    Trace(cli::trace::TraceArgs),
    /// Receive the reports of socket observers (spec §13.1) on 127.0.0.1:PORT, print
    /// them and acknowledge them (interactive observers wait for that).
    Observe(cli::observe::ObserveArgs),
    /// Run a benchmark of bench/BENCHMARKS.md §1 in-process on every engine, output checked,
    /// side by side with the classic runtime's figures.
    Bench(cli::bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let usage = e.use_stderr();
            let _ = e.print();
            // Usage errors exit 2; --help / --version exit 0.
            return if usage {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // Like a classic C program (and the classic runtime): a closed output pipe
    // (`snet run ... | head`) ends the process quietly instead of an error message.
    #[cfg(unix)]
    // SAFETY: setting the default action of SIGPIPE before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Box code may run on this thread (the seq engine, worker 0 of the others): give it
    // the stack a C box with large local arrays would have had in the classic runtime.
    let work = std::thread::Builder::new()
        .name("snet-main".into())
        .stack_size(64 << 20)
        .spawn(move || match cli.command {
            Command::Check(args) => cli::check::run(args),
            Command::Graph(args) => cli::graph::run(args),
            Command::Stubs(args) => cli::stubs::run(args),
            Command::Run(args) => cli::run::run(*args),
            Command::Trace(args) => cli::trace::run(args),
            Command::Observe(args) => cli::observe::run(args),
            Command::Bench(args) => cli::bench::run(args),
        });
    match work.map(|h| h.join()) {
        Ok(Ok(code)) => match cli::term::stdout_error() {
            Some(e) => {
                eprintln!("error: cannot write to standard output: {e}");
                ExitCode::from(1)
            }
            None => code,
        },
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(e) => {
            eprintln!("error: cannot start the main thread: {e}");
            ExitCode::from(1)
        }
    }
}
