//! SVG pictures of a network without an external program: the DOT text of
//! `snet graph` is parsed and laid out by the `layout-rs` crate (a pure-Rust layered
//! layout of the Sugiyama kind) and written as SVG.
//!
//! `layout-rs` reads a subset of DOT: clusters are flattened (their nodes stay, their
//! frames and labels are not drawn), and every node shape it does not know is a
//! circle labelled with the node's name. The small junction points of `snet graph`
//! (`shape=point`) are therefore given an empty label here, and arrow heads keep one
//! size whatever the line width.

/// Renders `dot` (as written by `snet graph`) as an SVG document.
pub(crate) fn dot_to_svg(dot: &str) -> Result<String, String> {
    let dot = dot.replace(
        "shape=point, width=0.08",
        "shape=circle, label=\"\", fontsize=4",
    );
    // The layout crate asserts its own invariants; a failure there must not take the
    // command down with a backtrace.
    let result = std::panic::catch_unwind(move || {
        let mut parser = layout::gv::DotParser::new(&dot);
        let graph = parser.process()?;
        let mut builder = layout::gv::GraphBuilder::new();
        builder.visit_graph(&graph);
        let mut vg = builder.get();
        let mut svg = layout::backends::svg::SVGWriter::new();
        vg.do_it(false, false, false, &mut svg);
        // Arrow heads in pixels, not in multiples of the line width: a wide edge (many
        // records) would otherwise end in a huge triangle.
        Ok::<String, String>(svg.finalize().replace(
            "markerWidth=\"10\" markerHeight=\"7\"",
            "markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"7\"",
        ))
    });
    match result {
        Ok(r) => r.map_err(|e| format!("cannot lay out the graph: {e}")),
        Err(_) => Err("cannot lay out the graph (the layout crate failed)".into()),
    }
}
