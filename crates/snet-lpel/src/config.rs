//! Runtime configuration: the knobs the CLI exposes (`-w`, assignment, scheduling,
//! monitoring, placement).

use std::path::PathBuf;
use std::time::Duration;

/// How new tasks are assigned to workers (seed 000 §5.4.2, §6.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Assignment {
    /// Worker `k mod n` for the k-th task.
    #[default]
    RoundRobin,
    /// Box tasks: the worker with the fewest instances of the same box (ties: fewest
    /// box tasks overall); other tasks go where the next box task would go.
    Balanced,
}

/// Which ready task a worker dispatches next (seed 000 §4.2.3, §6.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheduling {
    /// One FIFO ready queue.
    #[default]
    Fifo,
    /// Two FIFO queues: non-box tasks first, box tasks only when no other is ready.
    Priority,
}

/// Monitoring levels of seed 000 §5.4.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MonitorLevel {
    /// Box tasks only, execution time only.
    A,
    /// Box tasks only, execution time and stream activity.
    B,
    /// All tasks, execution time and stream activity.
    C,
    /// Like C, plus worker debug lines (waits on the mailbox).
    D,
}

impl std::str::FromStr for MonitorLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "a" | "A" => Ok(MonitorLevel::A),
            "b" | "B" => Ok(MonitorLevel::B),
            "c" | "C" => Ok(MonitorLevel::C),
            "d" | "D" => Ok(MonitorLevel::D),
            other => Err(format!(
                "unknown monitoring level `{other}` (expected a, b, c or d)"
            )),
        }
    }
}

/// Where and how much to monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorConfig {
    /// Detail level.
    pub level: MonitorLevel,
    /// Directory for `mon_w<N>.log`, `tasks.map` and `trace.json`.
    pub dir: PathBuf,
    /// Also write a Chrome/Perfetto trace-event JSON (`trace.json`).
    pub trace: bool,
}

/// Placement strategy of the asynchronous placement scheduler (seed 004 §3.5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    /// After each activation a task is marked with probability `p`; the scheduler
    /// sends marked tasks to a random worker.
    Random {
        /// Probability per activation.
        p: f64,
    },
    /// A task whose sliding-window average ready time exceeds its worker's average
    /// moves to the worker with the lowest average.
    WaitingTime {
        /// Number of past dispatches in a task's window.
        window: usize,
        /// A worker's average must exceed the lowest one by this factor before tasks
        /// leave it (damping; the paper's rule is `threshold = 1.0`).
        threshold: f64,
        /// At most this many tasks leave one worker per scheduler round.
        max_moves: usize,
    },
}

/// The placement scheduler's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacementConfig {
    /// Strategy.
    pub strategy: Strategy,
    /// Period of the placement scheduler.
    pub interval: Duration,
}

/// Runtime configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Worker threads (default: available cores).
    pub workers: usize,
    /// Task assignment policy.
    pub assignment: Assignment,
    /// Ready-queue policy.
    pub scheduling: Scheduling,
    /// Monitoring (off if `None`).
    pub monitoring: Option<MonitorConfig>,
    /// Placement scheduler and migration (off if `None`).
    pub placement: Option<PlacementConfig>,
    /// Stack size of a task in bytes (plus a guard page).
    pub stack_size: usize,
    /// Pin worker `i` to core `i mod cores`.
    pub pin_workers: bool,
    /// Seed of the random number generators (placement).
    pub seed: u64,
    /// How long an idle worker polls its mailbox before it sleeps, in µs (0: sleep
    /// at once). Spinning makes cross-worker wake-ups cheap when cores are free.
    pub idle_spin_us: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            assignment: Assignment::default(),
            scheduling: Scheduling::default(),
            monitoring: None,
            placement: None,
            stack_size: 128 * 1024,
            pin_workers: false,
            seed: 42,
            idle_spin_us: 50,
        }
    }
}

impl Config {
    /// Default configuration with `n` workers.
    pub fn with_workers(n: usize) -> Self {
        Config {
            workers: n.max(1),
            ..Config::default()
        }
    }
}
