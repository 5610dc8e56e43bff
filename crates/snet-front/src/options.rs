//! Options of the FRONT engine beyond the common `RunOptions`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Input control `input <= base + per_output * output` (seed 003 §4.6): at most `base`
/// records are admitted before the first output, and `per_output` more per record
/// output. The network is never starved: when nothing at all is in flight, one more
/// record is admitted even if the bound says no (otherwise a network that consumes
/// records without output would stop).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimit {
    /// Records admitted before any output.
    pub base: u64,
    /// Records admitted per record output.
    pub per_output: u64,
}

impl InputLimit {
    /// True if one more record may be read after `input` records in and `output` out.
    pub fn admits(&self, input: u64, output: u64) -> bool {
        input
            < self
                .base
                .saturating_add(self.per_output.saturating_mul(output))
    }
}

/// Why an input-limit specification does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLimitError(String);

impl fmt::Display for InputLimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad input limit `{}`: expected `A + B*output` (e.g. `8 + 2*output`), `A,B` or `A`",
            self.0
        )
    }
}

impl std::error::Error for InputLimitError {}

impl FromStr for InputLimit {
    type Err = InputLimitError;

    /// Accepts `input <= 8 + 2*output`, `8+2*output`, `8 + output`, `2*output`, `8,2`
    /// and `8` (no growth with output). Spaces are ignored.
    fn from_str(s: &str) -> Result<InputLimit, InputLimitError> {
        let bad = || InputLimitError(s.to_string());
        let t: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let t = t.strip_prefix("input<=").unwrap_or(&t);
        let num = |x: &str| x.parse::<u64>().map_err(|_| bad());
        if let Some((a, b)) = t.split_once(',') {
            return Ok(InputLimit {
                base: num(a)?,
                per_output: num(b)?,
            });
        }
        let mut base = 0;
        let mut per_output = 0;
        for term in t.split('+') {
            if let Some(coef) = term.strip_suffix("output") {
                per_output += match coef {
                    "" => 1,
                    c => num(c.strip_suffix('*').ok_or_else(bad)?)?,
                };
            } else {
                base += num(term)?;
            }
        }
        Ok(InputLimit { base, per_output })
    }
}

/// Concurrent invocations allowed per box instance (seed 003 §4.7): a default for every
/// box and overrides by box name. 1 means one invocation at a time (no order-restoring
/// collector); above 1, up to that many workers run the same box instance on successive
/// records of its stream and a per-box collector restores the stream order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxConcurrency {
    /// Limit for boxes not named in `by_name`.
    pub default: usize,
    /// Limits by S-Net box name.
    pub by_name: Vec<(String, usize)>,
}

impl Default for BoxConcurrency {
    fn default() -> Self {
        BoxConcurrency {
            default: 1,
            by_name: Vec::new(),
        }
    }
}

impl BoxConcurrency {
    /// The limit for box `name` (at least 1).
    pub fn limit(&self, name: &str) -> usize {
        self.by_name
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or(self.default, |(_, k)| *k)
            .max(1)
    }
}

/// Why a box-concurrency specification does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxConcurrencyError(String);

impl fmt::Display for BoxConcurrencyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad box concurrency `{}`: expected `K` (every box) and/or `BOX=K` items \
             separated by commas, K >= 1 (e.g. `4` or `2,work=8`)",
            self.0
        )
    }
}

impl std::error::Error for BoxConcurrencyError {}

impl FromStr for BoxConcurrency {
    type Err = BoxConcurrencyError;

    /// Accepts `K`, `BOX=K` and comma-separated lists of both (`2,work=8`).
    fn from_str(s: &str) -> Result<BoxConcurrency, BoxConcurrencyError> {
        let bad = || BoxConcurrencyError(s.to_string());
        let num = |x: &str| match x.trim().parse::<usize>() {
            Ok(k) if k >= 1 => Ok(k),
            _ => Err(bad()),
        };
        let mut c = BoxConcurrency::default();
        for item in s.split(',') {
            match item.split_once('=') {
                Some((name, k)) => {
                    let name = name.trim();
                    if name.is_empty() {
                        return Err(bad());
                    }
                    c.by_name.push((name.to_string(), num(k)?));
                }
                None => c.default = num(item)?,
            }
        }
        Ok(c)
    }
}

/// FRONT-specific options.
#[derive(Debug, Clone)]
pub struct FrontOptions {
    /// Optional input control (seed 003 §4.6); `None` admits input whenever a worker is
    /// idle.
    pub input_limit: Option<InputLimit>,
    /// Write a Chrome/Perfetto trace-event JSON of box invocations per worker here.
    pub trace: Option<PathBuf>,
    /// Rounds an idle worker spins (with growing pauses) and then yields before it
    /// parks.
    pub spin_rounds: u32,
    /// Pause iterations a worker waits for a busy destination before it queues the
    /// record it walks (0 = queue at once, as in seed 003 §4.5).
    pub walk_spin: u32,
    /// Run the workers on a `snet_forkjoin` pool ("one pool, two users"): each worker
    /// loop is a job on one pool worker, so a Rust box may fork with
    /// `snet_forkjoin::join` / `for_each` onto the engine's own threads, and an idle
    /// worker helps with those forks. Off by default (plain threads).
    pub forkjoin: bool,
    /// Concurrent invocations per box instance (seed 003 §4.7, `--box-concurrency`).
    pub box_concurrency: BoxConcurrency,
}

impl Default for FrontOptions {
    fn default() -> Self {
        FrontOptions {
            input_limit: None,
            trace: None,
            spin_rounds: 64,
            walk_spin: 128,
            forkjoin: false,
            box_concurrency: BoxConcurrency::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_seed_notation_and_shortcuts() {
        let l = |base, per_output| Ok(InputLimit { base, per_output });
        assert_eq!("input <= 8 + 2 * output".parse(), l(8, 2));
        assert_eq!("8+2*output".parse(), l(8, 2));
        assert_eq!("8 + output".parse(), l(8, 1));
        assert_eq!("2*output".parse(), l(0, 2));
        assert_eq!("8,2".parse(), l(8, 2));
        assert_eq!("16".parse(), l(16, 0));
        assert!("8 + 2 output".parse::<InputLimit>().is_err());
        assert!("x".parse::<InputLimit>().is_err());
        assert!("".parse::<InputLimit>().is_err());
    }

    #[test]
    fn box_concurrency_parses_defaults_and_overrides() {
        let c: BoxConcurrency = "2,work=8, other = 3".parse().unwrap();
        assert_eq!(c.limit("work"), 8);
        assert_eq!(c.limit("other"), 3);
        assert_eq!(c.limit("foo"), 2);
        assert_eq!("work=4".parse::<BoxConcurrency>().unwrap().limit("x"), 1);
        for bad in ["0", "x", "=3", "work=0", "", "2,,3"] {
            assert!(bad.parse::<BoxConcurrency>().is_err(), "{bad}");
        }
    }

    #[test]
    fn admits_by_the_bound() {
        let l = InputLimit {
            base: 8,
            per_output: 2,
        };
        assert!(l.admits(7, 0));
        assert!(!l.admits(8, 0));
        assert!(l.admits(9, 1));
        assert!(!l.admits(10, 1));
    }
}
