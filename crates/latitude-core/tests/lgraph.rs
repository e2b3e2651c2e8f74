//! `.lgraph` files: a graph written and mapped back is the same graph (every array, the
//! stored order, GOAL text, predictions), and damaged files give one error, never a panic.
mod common;

use latitude_core::engine::{predict, Plan};
use latitude_core::gen::random::{random_graph, RandomSpec};
use latitude_core::goal::{read_goal_from, write_goal_to};
use latitude_core::graph::ExecGraph;
use latitude_core::lgraph;
use latitude_core::model::{Model, Protocol};
use latitude_core::net::Flat;

fn tmp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("latitude-lgraph-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_string_lossy().into_owned()
}

/// Every stored value at every position.
#[allow(clippy::type_complexity)]
fn fingerprint(g: &ExecGraph) -> Vec<(u8, u32, u32, u64, u32, u32, u16, u16, Vec<u32>, u32, u64)> {
    (0..g.len() as u32)
        .map(|v| (g.kind(v) as u8, g.rank(v), g.local(v), g.val(v), g.peer(v), g.tag(v), g.cpu(v), g.nic(v), g.preds_raw(v).to_vec(), g.partner(v), g.copy(v)))
        .collect()
}

fn goal_text(g: &ExecGraph) -> Vec<u8> {
    let mut text = Vec::new();
    write_goal_to(g, &mut text).unwrap();
    text
}

fn random(seed: u64) -> ExecGraph {
    let p_copy = if seed % 4 == 3 { 0.4 } else { 0.0 };
    let spec = RandomSpec { ranks: 1 + (seed % 9) as u32, rounds: 1 + (seed % 11) as u32, seed, unsafe_exchanges: seed % 3 == 1, p_copy, ..Default::default() };
    random_graph(&spec).unwrap()
}

#[test]
fn written_and_mapped_back_graphs_are_identical() {
    let path = tmp("rt.lgraph");
    for seed in 0..200 {
        let g = random(seed);
        lgraph::write(&g, &path, seed).unwrap();
        let h = lgraph::read(&path).unwrap();
        assert_eq!(fingerprint(&g), fingerprint(&h), "seed {seed}");
        assert_eq!((g.order_kind(), g.wildcard_recvs(), g.num_ranks()), (h.order_kind(), h.wildcard_recvs(), h.num_ranks()));
        assert_eq!(goal_text(&g), goal_text(&h), "seed {seed}: GOAL -> binary -> GOAL changed the text");
        assert!(lgraph::read_if_key(&path, seed).is_some() && lgraph::read_if_key(&path, seed + 1).is_none());
        for model in [Model::default(), Model { protocol: Protocol::LogGopSim, eager_limit: 64, nic_serialization: true, ..Model::default() }] {
            let (mut a, mut b) = (g.clone(), h.clone());
            let (pa, pb) = (Plan::prepare(&mut a, model), Plan::prepare(&mut b, model));
            let (Ok(pa), Ok(pb)) = (pa, pb) else {
                assert_eq!(Plan::prepare(&mut g.clone(), model).is_err(), Plan::prepare(&mut h.clone(), model).is_err());
                continue;
            };
            let pt = common::point(3000.0, 1500.0, 100.0, 0.018, 0.001);
            assert_eq!(pa.nslots(), pb.nslots(), "seed {seed}: the stored slots are not the computed ones");
            let (ra, rb) = (predict(&a, &pa, &Flat, &pt).unwrap(), predict(&b, &pb, &Flat, &pt).unwrap());
            assert_eq!((ra.runtime_ns(), ra.right, ra.left), (rb.runtime_ns(), rb.right, rb.left), "seed {seed}");
        }
    }
}

#[test]
fn goal_source_lines_and_wildcards_survive() {
    let text = "num_ranks 2\nrank 0 {\nl1: calc 5\nl2: send 8b to 1 tag 3\nl2 requires l1\n}\nrank 1 {\nl1: recv 8b from -1 tag 3\n}\n";
    let g = read_goal_from(text.as_bytes(), "w.goal").unwrap();
    let path = tmp("w.lgraph");
    lgraph::write(&g, &path, 0).unwrap();
    let h = lgraph::read(&path).unwrap();
    assert_eq!(h.wildcard_recvs(), 1);
    assert_eq!(h.location(1), g.location(1));
    assert_eq!(h.source().unwrap().path, "w.goal");
}

#[test]
fn atlahs_streams_and_wide_tags_survive() {
    // ATLAHS's NCCL GOAL: per-stream cpu/nic and tags wider than 32 bits (given ids by the
    // reader); the binary keeps the graph the reader built, ids included.
    let goal = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/nccl-ring-allreduce-8x4.goal");
    let g = latitude_core::goal::read_goal(goal).unwrap();
    assert!(g.max_cpu() > 0 && (0..g.len() as u32).any(|v| g.tag(v) > 1 << 31), "the example has streams and wide tags");
    let path = tmp("nccl.lgraph");
    lgraph::write(&g, &path, 0).unwrap();
    let h = lgraph::read(&path).unwrap();
    assert_eq!(fingerprint(&g), fingerprint(&h));
    assert_eq!((h.max_cpu(), h.max_nic()), (g.max_cpu(), g.max_nic()));
    assert_eq!(goal_text(&g), goal_text(&h));
    assert_eq!(h.location(7), g.location(7));
}

fn err_of(bytes: &[u8], name: &str) -> String {
    let path = tmp(name);
    std::fs::write(&path, bytes).unwrap();
    let e = lgraph::read(&path).err().unwrap_or_else(|| panic!("{name}: a damaged file was accepted"));
    assert_eq!(e.location, path);
    e.message
}

#[test]
fn damaged_files_are_one_error_each() {
    let path = tmp("good.lgraph");
    lgraph::write(&random(7), &path, 0).unwrap();
    let good = std::fs::read(&path).unwrap();
    // Every byte flipped somewhere (a stride through the whole file, header included).
    for at in (0..good.len()).step_by(good.len() / 400 + 1).chain(8..16) {
        let mut b = good.clone();
        b[at] ^= 0x5a;
        let msg = err_of(&b, "flip.lgraph");
        assert!(["corrupted", "version", "truncated", "not an .lgraph"].iter().any(|m| msg.contains(m)), "byte {at}: {msg}");
    }
    for len in [0, 5, 8, 100, 128, 300, good.len() / 2, good.len() - 1] {
        let msg = err_of(&good[..len], "short.lgraph");
        assert!(msg.contains("truncated") || msg.contains("not an .lgraph"), "{len}: {msg}");
    }
    for (v, why) in [(1, "before the engine's slots were stored"), (2, "before calcs could copy bytes")] {
        let mut b = good.clone();
        b[8] = v;
        let msg = err_of(&b, "old.lgraph");
        assert_eq!(msg, format!("written in .lgraph format version {v}; this Latitude reads version 3 (convert the GOAL file again)"), "{why}");
    }
    let mut b = good.clone();
    b.extend_from_slice(&[0; 64]);
    assert!(err_of(&b, "long.lgraph").contains("corrupted"));
    assert!(err_of(b"num_ranks 2\n", "text.lgraph").contains("not an .lgraph"));
}
