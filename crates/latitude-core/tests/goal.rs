mod common;

use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::goal::{read_goal_from, write_goal_to};
use latitude_core::graph::{Dep, ExecGraph, Kind, ANY};

/// A canonical, order-independent description: per rank, per op in source order.
#[allow(clippy::type_complexity)]
fn canonical(g: &ExecGraph) -> Vec<(u32, u32, Kind, u64, u32, u32, u16, u16, Vec<(u32, bool)>, u64)> {
    let mut out = Vec::new();
    for v in 0..g.len() as u32 {
        let mut preds: Vec<(u32, bool)> = g.preds(v).map(|(p, d)| (g.local(p), d == Dep::Irequires)).collect();
        preds.sort_unstable();
        out.push((g.rank(v), g.local(v), g.kind(v), g.val(v), g.peer(v), g.tag(v), g.cpu(v), g.nic(v), preds, g.copy(v)));
    }
    out.sort_by_key(|x| (x.0, x.1));
    out
}

fn roundtrip(g: &ExecGraph) -> ExecGraph {
    let mut text = Vec::new();
    write_goal_to(g, &mut text).unwrap();
    read_goal_from(&text[..], "roundtrip.goal").unwrap()
}

#[test]
fn read_write_read_is_identity_on_random_graphs() {
    for seed in 0..100 {
        let p_copy = if seed % 2 == 1 { 0.3 } else { 0.0 };
        let g = random_graph(&RandomSpec { ranks: 1 + (seed % 7) as u32, rounds: 5, seed, p_copy, ..Default::default() }).unwrap();
        let g2 = roundtrip(&g);
        assert_eq!(canonical(&g), canonical(&g2), "seed {seed}");
        let g3 = roundtrip(&g2);
        assert_eq!(canonical(&g2), canonical(&g3));
    }
}

const PINGPONG: &str = "num_ranks 2

rank 0 {
l1: calc 1000
l2: send 64b to 1 tag 7
l3: recv 64b from 1 tag 7
l4: calc 500
l2 requires l1
l3 requires l2
l4 requires l3
}

rank 1 {
l1: recv 64b from 0 tag 7
l2: calc 2000
l3: send 64b to 0 tag 7
l2 requires l1
l3 requires l2
}
";

#[test]
fn reference_example_pingpong() {
    let g = read_goal_from(PINGPONG.as_bytes(), "pp.goal").unwrap();
    assert_eq!(g.len(), 7);
    assert_eq!(g.num_edges(), 5);
    assert_eq!(canonical(&g), canonical(&roundtrip(&g)));
}

#[test]
fn reference_example_wildcards_and_cpus() {
    // docs/reference/goal.md §2: rank 1 uses ANY_SOURCE/ANY_TAG; cpu/nic options, unlabelled ops.
    let nb = "num_ranks 2\nrank 0 {\nc1: calc 100\ns: send 70000b to 1 tag 3\nr: recv 70000b from 1 tag 3\nc2: calc 5000\nw: calc 0\ns requires c1\nr requires c1\nc2 irequires s\nc2 irequires r\nw requires s\nw requires r\nw requires c2\n}\nrank 1 {\nc1: calc 100\ns: send 70000b to 0 tag 3\n// next line: any source, any tag\nr: recv 70000b from -1 tag -1\nc2: calc 5000\nw: calc 0\ns requires c1\nr requires c1\nc2 irequires s\nc2 irequires r\nw requires s\nw requires r\nw requires c2\n}\n";
    let g = read_goal_from(nb.as_bytes(), "nb.goal").unwrap();
    assert_eq!(g.wildcard_recvs(), 1);
    let r = (0..g.len() as u32).find(|&v| g.rank(v) == 1 && g.kind(v) == Kind::Recv).unwrap();
    assert_eq!((g.peer(r), g.tag(r)), (ANY, ANY));
    let cpus = "num_ranks 2\nrank 0 {\ncalc 10 cpu 1\na: send 8b to 1 tag 0 cpu 0 nic 0\nb: calc 300 cpu 1\nb irequires a\n}\nrank 1 { recv 8b from 0\n}\n";
    let g = read_goal_from(cpus.as_bytes(), "cpu.goal").unwrap();
    assert_eq!(g.len(), 4);
    assert_eq!(g.max_cpu(), 1);
    assert_eq!(canonical(&g), canonical(&roundtrip(&g)));
}

#[test]
fn lexical_variants_are_accepted() {
    // Spacing variants, labels in any order, block comments between statements, CRLF.
    let text = "num_ranks 1\r\n/* header\r\n comment */ rank 0 { x_1 : calc 5\r\n  l9:send 0 b to 0 tag 4294967295\r\nl2: recv 0b from 0 tag -1\r\nl2 requires x_1\r\nl9 irequires x_1\r\n} /* done */\r\n";
    let g = read_goal_from(text.as_bytes(), "lex.goal").unwrap();
    assert_eq!(g.len(), 3);
    assert_eq!(g.wildcard_recvs(), 1);
}

#[test]
fn hostile_text_is_refused_with_its_line() {
    let err = |text: &[u8]| read_goal_from(text, "h.goal").map(|_| ()).unwrap_err().to_string();
    let e = err(b"num_ranks 1\nrank 0 {\nl1: calc 5\nl1: calc 7\n}\n");
    assert!(e.starts_with("h.goal:4: label 'l1' is defined twice in the block of rank 0 (first on line 3)"), "{e}");
    let e = err(b"num_ranks 1\nrank 0 {\nx_1: calc 5\nl2: calc 1\nx_1: calc 7\n}\n");
    assert!(e.starts_with("h.goal:5: label 'x_1' is defined twice"), "{e}");
    // The same label in two rank blocks is fine.
    read_goal_from(&b"num_ranks 2\nrank 0 {\nl1: calc 5\n}\nrank 1 {\nl1: calc 5\n}\n"[..], "ok.goal").unwrap();
    assert!(err(b"num_ranks 1\nrank 0 {\0\n").starts_with("h.goal:2: a NUL byte"));
    let mut long = b"num_ranks 1\n".to_vec();
    long.resize(long.len() + (2 << 20), b'x');
    assert!(err(&long).starts_with("h.goal:2: line longer than 1 MiB"));
    // Endless input (like /dev/zero) stops at the first line.
    let e = read_goal_from(std::io::repeat(b'a'), "endless").map(|_| ()).unwrap_err().to_string();
    assert!(e.starts_with("endless:1: line longer than 1 MiB"), "{e}");
    // Control characters from the input are escaped in the message.
    let e = err(b"num_ranks 1\n\x1b[2Jboom\n");
    assert!(e.contains("'\\x1b[2Jboom'") && !e.contains('\x1b'), "{e}");
}

/// `//@copy Sb` annotates the calc after it (docs/graph-format.md): our reader gives that
/// calc the copy, the writer puts it back, and text without annotations reads as before.
#[test]
fn copy_annotations_round_trip_and_misuse_names_its_line() {
    let text = "num_ranks 1\nrank 0 {\n//@copy 2097152b\nl1: calc 0\n// an ordinary comment\nl2: calc 7\n//@copy 8b\nl3: calc 5 cpu 1\nl2 requires l1\nl3 requires l2\n}\n";
    let g = read_goal_from(text.as_bytes(), "c.goal").unwrap();
    let by_local: Vec<(u64, u64)> = {
        let mut v: Vec<_> = (0..3).map(|v| (g.local(v), (g.val(v), g.copy(v)))).collect();
        v.sort();
        v.into_iter().map(|x| x.1).collect()
    };
    assert_eq!(by_local, vec![(0, 2097152), (7, 0), (5, 8)]);
    assert!(g.has_copies());
    let mut out = Vec::new();
    write_goal_to(&g, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("//@copy 2097152b\nl1: calc 0\nl2: calc 7\n//@copy 8b\nl3: calc 5 cpu 1\n"), "{out}");
    assert_eq!(canonical(&g), canonical(&roundtrip(&g)));
    // Without annotations nothing copies and the text is written as before.
    let plain = read_goal_from(PINGPONG.as_bytes(), "pp.goal").unwrap();
    assert!(!plain.has_copies());
    let err = |text: &str| read_goal_from(text.as_bytes(), "h.goal").map(|_| ()).unwrap_err().to_string();
    let e = err("num_ranks 2\nrank 0 {\n//@copy 8b\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n}\n");
    assert!(e.starts_with("h.goal:4: a send after '//@copy' (line 3): only a calc can copy bytes"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\nl1: calc 1\n//@copy 8b\n}\n");
    assert!(e.starts_with("h.goal:4: '//@copy' is not followed by a calc in its rank block"), "{e}");
    let e = err("num_ranks 1\n//@copy 8b\nrank 0 {\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:2: '//@copy' outside a rank block"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\n//@copy 8\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:3: expected 'b' after the copy size"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\n//@move 8b\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:3: expected 'copy' or 'call' after '//@'"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\n//@copy 8b\n//@copy 9b\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:4: a second '//@copy' before a calc (the one on line 3 has no calc yet)"), "{e}");
}

/// `//@call COLL ALG P BYTES ID` marks the calc after it as a rank's end of a collective
/// call (what the call cost K prices): read into the graph's call table, written back, and
/// misuse is one error naming its line.
#[test]
fn call_annotations_round_trip_and_misuse_names_its_line() {
    let text = "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n//@call allreduce chain:64KiB 2 8 4294967297\nl2: calc 0\nl2 requires l1\n}\n\
                rank 1 {\nl1: recv 8b from 0 tag 0\n//@copy 8b\n//@call allreduce chain:64KiB 2 8 4294967297\nl2: calc 3\nl2 requires l1\n}\n";
    let g = read_goal_from(text.as_bytes(), "k.goal").unwrap();
    let calls = g.colls();
    assert_eq!(calls.kinds, vec![("allreduce".to_string(), "chain:64KiB".to_string())]);
    assert_eq!(calls.marks.len(), 2);
    for m in &calls.marks {
        assert_eq!((g.kind(m.vertex), g.local(m.vertex), m.procs, m.bytes, m.instance), (Kind::Calc, 1, 2, 8, 4294967297));
    }
    let mut out = Vec::new();
    write_goal_to(&g, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    // the writer numbers the calls as it meets them (ids only tie a call's members together)
    assert!(out.contains("//@call allreduce chain:64KiB 2 8 1\n//@copy 8b\nl2: calc 3\n"), "{out}");
    let back = roundtrip(&g);
    assert_eq!(back.colls().marks.iter().map(|m| (back.rank(m.vertex), back.local(m.vertex))).collect::<Vec<_>>(), vec![(0, 1), (1, 1)]);
    let err = |text: &str| read_goal_from(text.as_bytes(), "h.goal").map(|_| ()).unwrap_err().to_string();
    let e = err("num_ranks 2\nrank 0 {\n//@call barrier x 2 0 1\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n}\n");
    assert!(e.starts_with("h.goal:4: a send after '//@call' (line 3): only a calc can end a collective call"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\nl1: calc 1\n//@call barrier x 1 0 1\n}\n");
    assert!(e.starts_with("h.goal:4: '//@call' is not followed by a calc in its rank block"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\n//@call barrier x two 0 1\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:3: expected communicator size"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\n//@call\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:3: expected the collective after '//@call'"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\n//@call barrier x 1 0 1 extra\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:3:"), "{e}");
    let e = err("num_ranks 1\nrank 0 {\n//@call barrier x 1 0 1\n//@call barrier x 1 0 2\nl1: calc 1\n}\n");
    assert!(e.starts_with("h.goal:4: a second '//@call' before a calc (the one on line 3 has no calc yet)"), "{e}");
}
