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
//! "records_out", "boxes": [{"name", "calls", "busy_s", "records_in", "records_out"}]}`;
//! in a distributed run each box row also has `"nodes": [{"node", "calls", "busy_s",
//! "records_out"}]`, the nodes it ran on.

use snet_core::{Args, BoxFailure, BoxFn, BoxTable, Emitter, RawKind, RawSlot};
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
    /// The same box's counters of one node of a distributed run (`local:N`).
    node: Option<Arc<BoxCounters>>,
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

    unsafe fn emit_raw(
        &mut self,
        variant: usize,
        kinds: &[RawKind],
        slots: &[RawSlot],
    ) -> Result<(), BoxFailure> {
        self.emitted += 1;
        // SAFETY: the caller's contract, passed on as it is.
        unsafe { self.inner.emit_raw(variant, kinds, slots) }
    }
}

impl Timed {
    /// Runs `call` with a counting emitter over `out`, timing it.
    fn timed(
        &self,
        out: &mut dyn Emitter,
        call: impl FnOnce(&mut dyn Emitter) -> Result<(), BoxFailure>,
    ) -> Result<(), BoxFailure> {
        let mut em = CountingEmitter {
            inner: out,
            emitted: 0,
        };
        let start = Instant::now();
        let r = call(&mut em);
        let ns = start.elapsed().as_nanos() as u64;
        for c in std::iter::once(&self.counters).chain(&self.node) {
            c.calls.fetch_add(1, Ordering::Relaxed);
            c.busy_ns.fetch_add(ns, Ordering::Relaxed);
            c.records_out.fetch_add(em.emitted, Ordering::Relaxed);
        }
        r
    }
}

impl BoxFn for Timed {
    fn invoke(&self, mut args: Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self.invoke_from(&mut args, out)
    }

    fn invoke_from(&self, args: &mut Args, out: &mut dyn Emitter) -> Result<(), BoxFailure> {
        self.timed(out, |em| self.inner.invoke_from(args, em))
    }

    fn raw_inputs(&self) -> bool {
        self.inner.raw_inputs()
    }

    unsafe fn invoke_raw(
        &self,
        kinds: &[RawKind],
        args: &[RawSlot],
        out: &mut dyn Emitter,
    ) -> Result<(), BoxFailure> {
        // SAFETY: the caller's contract, passed on as it is.
        self.timed(out, |em| unsafe { self.inner.invoke_raw(kinds, args, em) })
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
    /// A distributed run: each node's counters of every box (same order as `boxes`),
    /// for the `nodes` column of the file.
    per_node: std::sync::Mutex<std::collections::BTreeMap<u32, Vec<Arc<BoxCounters>>>>,
    /// An MPI run with `--progress`: the latest [`Profile::box_values`] of every other
    /// node, as they report during the run (node 0 shows the whole run).
    live: std::sync::Mutex<std::collections::BTreeMap<u32, Vec<u64>>>,
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
                    node: None,
                }),
            );
            boxes.push((sig.name.clone(), counters, sig.input.is_none()));
        }
        let p = Profile {
            boxes,
            records_in: Arc::default(),
            records_out: Arc::default(),
            start: Instant::now(),
            per_node: Default::default(),
            live: Default::default(),
        };
        (p, wrapped)
    }

    /// `table` (node `node`'s boxes of a distributed run in this process) with every
    /// box of `net` counted in this profile's counters (the figures of every node add
    /// up) and in the node's own.
    pub(crate) fn wrap_shared(
        &self,
        net: &snet_core::Net,
        table: &BoxTable,
        node: u32,
    ) -> BoxTable {
        let mine: Vec<Arc<BoxCounters>> = self.boxes.iter().map(|_| Arc::default()).collect();
        self.lock_nodes().insert(node, mine.clone());
        let mut wrapped = BoxTable::new();
        for sig in &net.boxes {
            let Some(f) = table.get(&sig.name) else {
                continue;
            };
            let Some(i) = self.boxes.iter().position(|(n, _, _)| *n == sig.name) else {
                wrapped.insert(sig.name.clone(), f.clone());
                continue;
            };
            wrapped.insert(
                sig.name.clone(),
                Arc::new(Timed {
                    inner: f.clone(),
                    counters: self.boxes[i].1.clone(),
                    node: Some(mine[i].clone()),
                }),
            );
        }
        wrapped
    }

    /// The per-box counters as numbers (calls, busy ns, records out per box, in
    /// declaration order): what a node of an MPI run sends node 0.
    #[cfg(feature = "mpi")]
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

    /// Adds node `node`'s [`Profile::box_values`] (node 0 of an MPI run; its own
    /// figures become node 0's column first).
    #[cfg(feature = "mpi")]
    pub(crate) fn add_box_values(&self, node: u32, v: &[u64]) {
        let copy = |src: &[u64]| -> Vec<Arc<BoxCounters>> {
            src.chunks_exact(3)
                .map(|x| {
                    Arc::new(BoxCounters {
                        calls: AtomicU64::new(x[0]),
                        busy_ns: AtomicU64::new(x[1]),
                        records_out: AtomicU64::new(x[2]),
                    })
                })
                .collect()
        };
        {
            let mut nodes = self.lock_nodes();
            if nodes.is_empty() {
                nodes.insert(0, copy(&self.box_values()));
            }
            nodes.insert(node, copy(v));
        }
        // The final figures replace the live ones.
        self.lock_live().remove(&node);
        for ((_, c, _), x) in self.boxes.iter().zip(v.chunks_exact(3)) {
            c.calls.fetch_add(x[0], Ordering::Relaxed);
            c.busy_ns.fetch_add(x[1], Ordering::Relaxed);
            c.records_out.fetch_add(x[2], Ordering::Relaxed);
        }
    }

    fn lock_nodes(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<u32, Vec<Arc<BoxCounters>>>> {
        self.per_node.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_live(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<u32, Vec<u64>>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Node `node`'s [`Profile::box_values`] so far (an MPI run's progress report).
    #[cfg(feature = "mpi")]
    pub(crate) fn set_live(&self, node: u32, v: Vec<u64>) {
        self.lock_live().insert(node, v);
    }

    /// Busy nanoseconds per box so far, every node's (this process's counters and the
    /// other nodes' latest reports).
    pub(crate) fn busy_now(&self) -> Vec<u64> {
        let live = self.lock_live();
        self.boxes
            .iter()
            .enumerate()
            .map(|(i, (_, c, _))| {
                c.busy_ns.load(Ordering::Relaxed)
                    + live
                        .values()
                        .map(|v| v.get(3 * i + 1).copied().unwrap_or(0))
                        .sum::<u64>()
            })
            .collect()
    }

    /// Busy nanoseconds so far per node of a distributed run (empty otherwise).
    pub(crate) fn node_busy_now(&self) -> Vec<(u32, u64)> {
        let busy = |v: &[u64]| v.chunks_exact(3).map(|x| x[1]).sum::<u64>();
        let live = self.lock_live();
        if !live.is_empty() {
            // MPI: this process is node 0.
            let mine = self
                .boxes
                .iter()
                .map(|(_, c, _)| c.busy_ns.load(Ordering::Relaxed))
                .sum();
            return std::iter::once((0, mine))
                .chain(live.iter().map(|(n, v)| (*n, busy(v))))
                .collect();
        }
        drop(live);
        self.lock_nodes()
            .iter()
            .map(|(n, cs)| {
                (
                    *n,
                    cs.iter().map(|c| c.busy_ns.load(Ordering::Relaxed)).sum(),
                )
            })
            .collect()
    }

    /// The JSON document of the figures so far.
    pub(crate) fn to_json(&self, engine: &str, workers: usize) -> String {
        let nodes = self.lock_nodes();
        let boxes: Vec<serde_json::Value> = self
            .boxes
            .iter()
            .enumerate()
            .map(|(i, (name, c, init))| {
                let calls = c.calls.load(Ordering::Relaxed);
                let mut row = serde_json::json!({
                    "name": name,
                    "calls": calls,
                    "busy_s": c.busy_ns.load(Ordering::Relaxed) as f64 / 1e9,
                    "records_in": if *init { 0 } else { calls },
                    "records_out": c.records_out.load(Ordering::Relaxed),
                });
                // A distributed run: where the box ran, node by node.
                if !nodes.is_empty() {
                    let per: Vec<serde_json::Value> = nodes
                        .iter()
                        .filter_map(|(node, cs)| {
                            let c = cs.get(i)?;
                            let calls = c.calls.load(Ordering::Relaxed);
                            (calls > 0).then(|| {
                                serde_json::json!({
                                    "node": node,
                                    "calls": calls,
                                    "busy_s": c.busy_ns.load(Ordering::Relaxed) as f64 / 1e9,
                                    "records_out": c.records_out.load(Ordering::Relaxed),
                                })
                            })
                        })
                        .collect();
                    row["nodes"] = serde_json::Value::Array(per);
                }
                row
            })
            .collect();
        drop(nodes);
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

/// One box row of a profile file. A figure that is missing or out of range (a count
/// that is not a whole number from 0 to 2^64 - 1, a negative or non-finite time) is
/// `None`, drawn as `?`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoxRow {
    pub(crate) name: String,
    pub(crate) calls: Option<u64>,
    pub(crate) busy_s: Option<f64>,
    pub(crate) records_in: Option<u64>,
    pub(crate) records_out: Option<u64>,
}

/// Reads the box rows of a profile file; the second list has a warning for each
/// figure that is missing or out of range.
pub(crate) fn load(text: &str) -> Result<(Vec<BoxRow>, Vec<String>), String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a profile (JSON): {e}"))?;
    let rows = v
        .get("boxes")
        .and_then(|b| b.as_array())
        .ok_or("not a profile: no `boxes` list (write one with `snet run --profile`)")?;
    let mut warnings = Vec::new();
    let rows = rows
        .iter()
        .map(|r| {
            let name = r
                .get("name")
                .and_then(|n| n.as_str())
                .ok_or("a box row without a name")?
                .to_owned();
            let mut bad = |k: &str, what: &str| {
                let shown = r.get(k).map_or("missing".to_owned(), |x| format!("{x}"));
                warnings.push(format!(
                    "box `{name}`: `{k}` is {shown}, not {what}; shown as `?`"
                ));
            };
            let mut count = |k: &str| {
                let v = r.get(k).and_then(|x| x.as_u64());
                if v.is_none() {
                    bad(k, "a count (a whole number from 0)");
                }
                v
            };
            let calls = count("calls");
            let records_in = count("records_in");
            let records_out = count("records_out");
            let busy_s = r
                .get("busy_s")
                .and_then(|x| x.as_f64())
                .filter(|s| s.is_finite() && *s >= 0.0);
            if busy_s.is_none() {
                bad("busy_s", "a time of 0 s or more");
            }
            Ok(BoxRow {
                name,
                calls,
                busy_s,
                records_in,
                records_out,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((rows, warnings))
}

/// The figures drawn on the graph: fill colour from white to red by the box's share of
/// all box time, edge widths 1-8 by records (relative to the busiest stream), and a
/// label with the numbers. Unknown figures (`None`) show as `?` and count as nothing.
pub(crate) fn heat(rows: &[BoxRow]) -> DotHeat {
    let total: f64 = rows.iter().filter_map(|r| r.busy_s).sum();
    let max_recs = rows
        .iter()
        .map(|r| r.records_in.unwrap_or(0).max(r.records_out.unwrap_or(0)))
        .max()
        .unwrap_or(0)
        .max(1);
    let width = |n: Option<u64>| 1 + (7.0 * n.unwrap_or(0) as f64 / max_recs as f64).round() as u32;
    let show = |n: Option<u64>| n.map_or("?".to_owned(), |n| n.to_string());
    let mut h = DotHeat::default();
    for r in rows {
        let share = match r.busy_s {
            Some(b) if total > 0.0 => Some(b / total),
            Some(_) => Some(0.0),
            None => None,
        };
        // White (no time) to a strong red (all the time).
        let g = (255.0 - 200.0 * share.unwrap_or(0.0)).round() as u8;
        h.boxes.insert(
            r.name.clone(),
            BoxHeat {
                label: format!(
                    "{} calls, {} busy ({})\nin {}, out {}",
                    show(r.calls),
                    r.busy_s.map_or("?".to_owned(), show_secs),
                    share.map_or("?".to_owned(), |s| format!("{:.0}%", s * 100.0)),
                    show(r.records_in),
                    show(r.records_out)
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
                calls: Some(10),
                busy_s: Some(0.9),
                records_in: Some(10),
                records_out: Some(100),
            },
            BoxRow {
                name: "cold".into(),
                calls: Some(10),
                busy_s: Some(0.1),
                records_in: Some(10),
                records_out: Some(10),
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
        assert_eq!(back, (rows[..1].to_vec(), vec![]));
    }

    /// Issue 33 item 11: `1e300` calls were drawn as 0 and a negative busy time as a
    /// negative share; they are now `?`, with a warning naming the box and the figure.
    #[test]
    fn out_of_range_figures_are_flagged_not_drawn_raw() {
        let (rows, warnings) = load(
            "{\"boxes\":[{\"name\":\"odd\",\"calls\":1e300,\"busy_s\":-2.5,\"records_in\":-1,\"records_out\":4},\
             {\"name\":\"ok\",\"calls\":3,\"busy_s\":0.5,\"records_in\":3,\"records_out\":3}]}",
        )
        .unwrap();
        assert_eq!(rows[0].calls, None);
        assert_eq!(rows[0].busy_s, None);
        assert_eq!(rows[0].records_in, None);
        assert_eq!(rows[0].records_out, Some(4));
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings[0].contains("box `odd`: `calls` is 1e+300"),
            "{warnings:?}"
        );
        assert!(warnings.iter().any(|w| w.contains("`busy_s` is -2.5")));
        let h = heat(&rows);
        let odd = &h.boxes["odd"].label;
        assert!(odd.starts_with("? calls, ? busy (?)\nin ?, out 4"), "{odd}");
        assert!(!odd.contains('-'), "{odd}");
        // The good box gets all the (known) time.
        assert!(h.boxes["ok"].label.contains("(100%)"));
        assert_eq!(h.boxes["odd"].fill, "#ffffff");
    }
}
