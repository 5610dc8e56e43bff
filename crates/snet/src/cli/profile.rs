//! Run figures per box for `snet run --profile FILE.json` and `--progress`, and the
//! heat picture of `snet graph --profile`.
//!
//! Figures are taken at the box interface, which every engine calls the same way:
//! each box's implementation is wrapped in a [`Timed`] box that counts calls, records
//! in and out and the time spent inside the box code. So every engine gives the same
//! figures, per box *declaration* (summed over the box's instances: star stages and
//! split replicas of one box are one row). Nothing is wrapped when neither option is
//! given, so a plain run pays nothing. Queue lengths are not recorded: the engines keep
//! no common queue (front walks records into boxes, lpel and threads have bounded
//! inboxes of their own), and `--stats` gives the peak of records in flight.
//!
//! The file is one JSON object: `{"engine", "workers", "wall_s", "records_in",
//! "records_out", "boxes": [{"name", "calls", "busy_s", "records_in", "records_out"}]}`.

use snet_core::{Args, BoxFailure, BoxFn, BoxTable, Emitter};
use snet_lang::{BoxHeat, DotHeat};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Counters of one box.
#[derive(Debug, Default)]
pub(crate) struct BoxCounters {
    pub(crate) calls: AtomicU64,
    pub(crate) busy_ns: AtomicU64,
    pub(crate) records_out: AtomicU64,
}

/// A box implementation that counts and times its calls.
struct Timed {
    inner: Arc<dyn BoxFn>,
    counters: Arc<BoxCounters>,
}

struct CountingEmitter<'a> {
    inner: &'a mut dyn Emitter,
    emitted: u64,
}

impl Emitter for CountingEmitter<'_> {
    fn emit(&mut self, variant: usize, values: Args) -> Result<(), BoxFailure> {
        self.emitted += 1;
        self.inner.emit(variant, values)
    }

    fn emit_from(&mut self, variant: usize, values: &mut Args) -> Result<(), BoxFailure> {
        self.emitted += 1;
        self.inner.emit_from(variant, values)
    }
}

impl BoxFn for Timed {
    fn invoke(&self, mut args: Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self.invoke_from(&mut args, out)
    }

    fn invoke_from(&self, args: &mut Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        let mut em = CountingEmitter {
            inner: out,
            emitted: 0,
        };
        let start = Instant::now();
        let r = self.inner.invoke_from(args, &mut em);
        let ns = start.elapsed().as_nanos() as u64;
        let c = &self.counters;
        c.calls.fetch_add(1, Ordering::Relaxed);
        c.busy_ns.fetch_add(ns, Ordering::Relaxed);
        c.records_out.fetch_add(em.emitted, Ordering::Relaxed);
        r
    }
}

/// The figures of a run, filled while it runs.
#[derive(Debug)]
pub(crate) struct Profile {
    /// `(box name, counters, is an initialiser)`, in declaration order.
    pub(crate) boxes: Vec<(String, Arc<BoxCounters>, bool)>,
    /// Records read from the global input.
    pub(crate) records_in: Arc<AtomicU64>,
    /// Records written to the global output.
    pub(crate) records_out: Arc<AtomicU64>,
    pub(crate) start: Instant,
}

impl Profile {
    /// Wraps every bound box of `net` in `table` with counters.
    pub(crate) fn wrap(net: &snet_core::Net, table: &BoxTable) -> (Profile, BoxTable) {
        let mut wrapped = BoxTable::new();
        let mut boxes = Vec::new();
        for sig in &net.boxes {
            let Some(f) = table.get(&sig.name) else {
                continue;
            };
            let counters = Arc::new(BoxCounters::default());
            wrapped.insert(
                sig.name.clone(),
                Arc::new(Timed {
                    inner: f.clone(),
                    counters: counters.clone(),
                }),
            );
            boxes.push((sig.name.clone(), counters, sig.input.is_none()));
        }
        let p = Profile {
            boxes,
            records_in: Arc::default(),
            records_out: Arc::default(),
            start: Instant::now(),
        };
        (p, wrapped)
    }

    /// `table` (one node's boxes of a distributed run in this process) with every box
    /// of `net` counted in this profile's counters: the figures of every node add up.
    pub(crate) fn wrap_shared(&self, net: &snet_core::Net, table: &BoxTable) -> BoxTable {
        let mut wrapped = BoxTable::new();
        for sig in &net.boxes {
            let Some(f) = table.get(&sig.name) else {
                continue;
            };
            let Some((_, counters, _)) = self.boxes.iter().find(|(n, _, _)| *n == sig.name) else {
                wrapped.insert(sig.name.clone(), f.clone());
                continue;
            };
            wrapped.insert(
                sig.name.clone(),
                Arc::new(Timed {
                    inner: f.clone(),
                    counters: counters.clone(),
                }),
            );
        }
        wrapped
    }

    /// The per-box counters as numbers (calls, busy ns, records out per box, in
    /// declaration order): what a node of an MPI run sends node 0.
    pub(crate) fn box_values(&self) -> Vec<u64> {
        self.boxes
            .iter()
            .flat_map(|(_, c, _)| {
                [
                    c.calls.load(Ordering::Relaxed),
                    c.busy_ns.load(Ordering::Relaxed),
                    c.records_out.load(Ordering::Relaxed),
                ]
            })
            .collect()
    }

    /// Adds another node's [`Profile::box_values`].
    pub(crate) fn add_box_values(&self, v: &[u64]) {
        for ((_, c, _), x) in self.boxes.iter().zip(v.chunks_exact(3)) {
            c.calls.fetch_add(x[0], Ordering::Relaxed);
            c.busy_ns.fetch_add(x[1], Ordering::Relaxed);
            c.records_out.fetch_add(x[2], Ordering::Relaxed);
        }
    }

    /// The JSON document of the figures so far.
    pub(crate) fn to_json(&self, engine: &str, workers: usize) -> String {
        let boxes: Vec<serde_json::Value> = self
            .boxes
            .iter()
            .map(|(name, c, init)| {
                let calls = c.calls.load(Ordering::Relaxed);
                serde_json::json!({
                    "name": name,
                    "calls": calls,
                    "busy_s": c.busy_ns.load(Ordering::Relaxed) as f64 / 1e9,
                    "records_in": if *init { 0 } else { calls },
                    "records_out": c.records_out.load(Ordering::Relaxed),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "engine": engine,
            "workers": workers,
            "wall_s": self.start.elapsed().as_secs_f64(),
            "records_in": self.records_in.load(Ordering::Relaxed),
            "records_out": self.records_out.load(Ordering::Relaxed),
            "boxes": boxes,
        });
        let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// One box row of a profile file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoxRow {
    pub(crate) name: String,
    pub(crate) calls: u64,
    pub(crate) busy_s: f64,
    pub(crate) records_in: u64,
    pub(crate) records_out: u64,
}

/// Reads the box rows of a profile file.
pub(crate) fn load(text: &str) -> Result<Vec<BoxRow>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a profile (JSON): {e}"))?;
    let rows = v
        .get("boxes")
        .and_then(|b| b.as_array())
        .ok_or("not a profile: no `boxes` list (write one with `snet run --profile`)")?;
    rows.iter()
        .map(|r| {
            let num = |k: &str| r.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
            Ok(BoxRow {
                name: r
                    .get("name")
                    .and_then(|n| n.as_str())
                    .ok_or("a box row without a name")?
                    .to_owned(),
                calls: num("calls"),
                busy_s: r.get("busy_s").and_then(|x| x.as_f64()).unwrap_or(0.0),
                records_in: num("records_in"),
                records_out: num("records_out"),
            })
        })
        .collect()
}

/// The figures drawn on the graph: fill colour from white to red by the box's share of
/// all box time, edge widths 1-8 by records (relative to the busiest stream), and a
/// label with the numbers.
pub(crate) fn heat(rows: &[BoxRow]) -> DotHeat {
    let total: f64 = rows.iter().map(|r| r.busy_s).sum();
    let max_recs = rows
        .iter()
        .map(|r| r.records_in.max(r.records_out))
        .max()
        .unwrap_or(0)
        .max(1);
    let width = |n: u64| 1 + (7.0 * n as f64 / max_recs as f64).round() as u32;
    let mut h = DotHeat::default();
    for r in rows {
        let share = if total > 0.0 { r.busy_s / total } else { 0.0 };
        // White (no time) to a strong red (all the time).
        let g = (255.0 - 200.0 * share).round() as u8;
        h.boxes.insert(
            r.name.clone(),
            BoxHeat {
                label: format!(
                    "{} calls, {} busy ({:.0}%)\nin {}, out {}",
                    r.calls,
                    show_secs(r.busy_s),
                    share * 100.0,
                    r.records_in,
                    r.records_out
                ),
                fill: format!("#ff{g:02x}{g:02x}"),
                width_in: width(r.records_in),
                width_out: width(r.records_out),
            },
        );
    }
    h
}

fn show_secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_colours_the_busiest_box_darkest_and_widens_its_edges() {
        let rows = vec![
            BoxRow {
                name: "hot".into(),
                calls: 10,
                busy_s: 0.9,
                records_in: 10,
                records_out: 100,
            },
            BoxRow {
                name: "cold".into(),
                calls: 10,
                busy_s: 0.1,
                records_in: 10,
                records_out: 10,
            },
        ];
        let h = heat(&rows);
        assert_eq!(h.boxes["hot"].fill, "#ff4b4b");
        assert_eq!(h.boxes["cold"].fill, "#ffebeb");
        assert_eq!(h.boxes["hot"].width_out, 8);
        assert_eq!(h.boxes["cold"].width_in, 2);
        assert!(h.boxes["hot"]
            .label
            .contains("10 calls, 900.0 ms busy (90%)"));
        let back = load(
            "{\"boxes\":[{\"name\":\"hot\",\"calls\":10,\"busy_s\":0.9,\"records_in\":10,\"records_out\":100}]}",
        )
        .unwrap();
        assert_eq!(back, rows[..1]);
    }
}
