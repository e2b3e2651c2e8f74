//! GOAL writer in Schedgen's style (docs/reference/goal.md §4), readable by txt2bin, LLAMP's
//! strict regex parser and our reader: `num_ranks N`, then per rank `rank R {`, ops
//! labelled `l1, l2, …` in source order, then that rank's dependency lines, then `}`.
//! Optional fields are written only when set (tag always, as Schedgen does).

use std::io::{BufWriter, Write};

use crate::error::Result;
use crate::graph::{CollMark, Dep, ExecGraph, Kind, ANY};
use crate::output::atomic_write;

/// Write `g` as GOAL text to `path` (atomically).
pub fn write_goal(g: &ExecGraph, path: &str) -> Result<()> {
    atomic_write(path, |f| {
        let mut w = BufWriter::with_capacity(1 << 20, f);
        write_goal_to(g, &mut w)?;
        w.flush()
    })
}

pub fn write_goal_to<W: Write>(g: &ExecGraph, w: &mut W) -> std::io::Result<()> {
    let (off, ids) = g.by_rank();
    let mut num = itoa::Buffer::new();
    // vertex -> its collective-call mark, for the `//@call` annotations
    let marks: std::collections::HashMap<u32, &CollMark> = g.colls().marks.iter().map(|m| (m.vertex, m)).collect();
    // a call's id is only shared by its members: numbered 1, 2, … as the text meets them, so
    // the text does not depend on how a reader numbered communicators
    let mut call_ids: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    writeln!(w, "num_ranks {}", g.num_ranks())?;
    for r in 0..g.num_ranks() as usize {
        write!(w, "\nrank {r} {{\n")?;
        let ops = &ids[off[r]..off[r + 1]];
        for &v in ops {
            if let Some(m) = marks.get(&v) {
                let (coll, alg) = &g.colls().kinds[m.kind as usize];
                // Latitude's annotation (docs/graph-format.md): the calc ends a collective call.
                let next = call_ids.len() as u64 + 1;
                let id = *call_ids.entry(m.instance).or_insert(next);
                writeln!(w, "//@call {coll} {alg} {} {} {id}", m.procs, m.bytes)?;
            }
            write_op(g, v, w, &mut num)?;
        }
        for &v in ops {
            for (p, dep) in g.preds(v) {
                let kw = if dep == Dep::Requires { " requires l" } else { " irequires l" };
                w.write_all(b"l")?;
                w.write_all(num.format(g.local(v) + 1).as_bytes())?;
                w.write_all(kw.as_bytes())?;
                w.write_all(num.format(g.local(p) + 1).as_bytes())?;
                w.write_all(b"\n")?;
            }
        }
        w.write_all(b"}\n")?;
    }
    Ok(())
}

fn write_op<W: Write>(g: &ExecGraph, v: u32, w: &mut W, num: &mut itoa::Buffer) -> std::io::Result<()> {
    if g.copy(v) != 0 {
        // Latitude's annotation (docs/graph-format.md): a comment to other readers.
        w.write_all(b"//@copy ")?;
        w.write_all(num.format(g.copy(v)).as_bytes())?;
        w.write_all(b"b\n")?;
    }
    w.write_all(b"l")?;
    w.write_all(num.format(g.local(v) + 1).as_bytes())?;
    match g.kind(v) {
        Kind::Calc => {
            w.write_all(b": calc ")?;
            w.write_all(num.format(g.val(v)).as_bytes())?;
            if g.cpu(v) != 0 {
                w.write_all(b" cpu ")?;
                w.write_all(num.format(g.cpu(v)).as_bytes())?;
            }
        }
        kind => {
            w.write_all(if kind == Kind::Send { b": send " } else { b": recv " })?;
            w.write_all(num.format(g.val(v)).as_bytes())?;
            w.write_all(if kind == Kind::Send { b"b to " } else { b"b from " })?;
            write_peer(g.peer(v), w, num)?;
            w.write_all(b" tag ")?;
            write_peer(g.tag(v), w, num)?;
            if g.cpu(v) != 0 || g.nic(v) != 0 {
                w.write_all(b" cpu ")?;
                w.write_all(num.format(g.cpu(v)).as_bytes())?;
            }
            if g.nic(v) != 0 {
                w.write_all(b" nic ")?;
                w.write_all(num.format(g.nic(v)).as_bytes())?;
            }
        }
    }
    w.write_all(b"\n")
}

fn write_peer<W: Write>(x: u32, w: &mut W, num: &mut itoa::Buffer) -> std::io::Result<()> {
    if x == ANY {
        w.write_all(b"-1")
    } else {
        w.write_all(num.format(x).as_bytes())
    }
}
