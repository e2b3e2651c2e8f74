//! Generated workloads against closed forms: messages and bytes per rank for every motif,
//! the trace converter's structure (a calc before every call), exact λ_L of simple chains,
//! seeded compute, several jobs side by side, and job-file errors naming the line.

use latitude_core::engine::{predict, Plan};
use latitude_core::graph::{Dep, ExecGraph, Kind, OrderKind, NONE};
use latitude_core::model::{p, Model, Point};
use latitude_core::net::Flat;
use latitude_core::synth::{generate, JobFile, SynthOptions};

fn gen(text: &str) -> ExecGraph {
    gen_seed(text, 1)
}

fn gen_seed(text: &str, seed: u64) -> ExecGraph {
    let f = JobFile::parse(text, "t.job").unwrap_or_else(|e| panic!("{e}"));
    generate(&f, &SynthOptions { seed, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).graph
}

fn err(text: &str) -> String {
    JobFile::parse(text, "t.job").map(|_| ()).unwrap_err().to_string()
}

/// Per rank: (messages sent, bytes sent, messages received, bytes received).
fn traffic(g: &ExecGraph) -> Vec<[u64; 4]> {
    let mut t = vec![[0u64; 4]; g.num_ranks() as usize];
    for v in 0..g.len() as u32 {
        let r = g.rank(v) as usize;
        match g.kind(v) {
            Kind::Send => {
                t[r][0] += 1;
                t[r][1] += g.val(v);
            }
            Kind::Recv => {
                t[r][2] += 1;
                t[r][3] += g.val(v);
            }
            Kind::Calc => {}
        }
    }
    t
}

fn lambda_l(g: &mut ExecGraph, l_ns: f64) -> u64 {
    let plan = Plan::prepare(g, Model::default()).unwrap();
    let pt = Point::from_ns(&[l_ns, 0.0, 0.0, 0.0, 0.0]).unwrap();
    predict(g, &plan, &Flat, &pt).unwrap().right[p::L]
}

fn job(ranks: &str, iterations: u64, motif: &str) -> String {
    format!("[JOB] j\n[RANKS] {ranks}\n[ITERATIONS] {iterations}\n[MOTIF] {motif}\n")
}

#[test]
fn halo3d_closed_form_per_rank() {
    // 4 x 3 x 2 grid, non-periodic: a rank has one neighbour per direction it is not at the
    // edge of; every message along axis a has the face size of a.
    let (px, py, pz) = (4u32, 3u32, 2u32);
    let (fx, fy, fz) = (1000u64, 2000u64, 3000u64);
    let iters = 3u64;
    let g = gen(&job("0-23", iters, &format!("halo3d px={px} py={py} pz={pz} x={fx} y={fy} z={fz}")));
    let t = traffic(&g);
    for r in 0..24u32 {
        let (cx, cy, cz) = (r % px, (r / px) % py, r / (px * py));
        let nx = (cx > 0) as u64 + (cx + 1 < px) as u64;
        let ny = (cy > 0) as u64 + (cy + 1 < py) as u64;
        let nz = (cz > 0) as u64 + (cz + 1 < pz) as u64;
        let msgs = iters * (nx + ny + nz);
        let bytes = iters * (nx * fx + ny * fy + nz * fz);
        assert_eq!(t[r as usize], [msgs, bytes, msgs, bytes], "rank {r}");
    }
    let total: u64 = t.iter().map(|x| x[0]).sum();
    let edges = (px - 1) * py * pz + px * (py - 1) * pz + px * py * (pz - 1);
    assert_eq!(total, iters * 2 * edges as u64);
}

#[test]
fn periodic_halo2d_has_four_neighbours_everywhere() {
    let g = gen(&job("0-5", 2, "halo2d px=3 py=2 x=64 y=128 periodic=1"));
    for (r, t) in traffic(&g).iter().enumerate() {
        // y has extent 2: both y neighbours are the same rank, two messages with their own tags
        assert_eq!(*t, [2 * 4, 2 * (2 * 64 + 2 * 128), 8, 2 * (2 * 64 + 2 * 128)], "rank {r}");
    }
    // Ranks beyond the grid are idle.
    let g = gen(&job("0-6", 1, "halo2d px=3 py=2"));
    assert_eq!(traffic(&g)[6], [0; 4]);
}

#[test]
fn sweep3d_closed_form() {
    // px x py = 3 x 2, nz/kba = 4 k-blocks, angles/mmi = 2 angle blocks, 8 octants.
    let g = gen(&job("0-6", 1, "sweep3d px=3 py=2 nx=12 ny=10 nz=8 kba=2 angles=4 mmi=2"));
    let steps = 8 * 4 * 2u64;
    let xb = 10u64.div_ceil(2) * 2 * 2 * 8; // ⌈ny/py⌉·kba·mmi·8
    let yb = 12u64.div_ceil(3) * 2 * 2 * 8;
    let t = traffic(&g);
    let (mut xs, mut ys) = (0u64, 0u64);
    for v in 0..g.len() as u32 {
        if g.kind(v) == Kind::Send {
            match g.val(v) {
                b if b == xb => xs += 1,
                b if b == yb => ys += 1,
                b => panic!("unexpected size {b}"),
            }
        }
    }
    // Per octant and step: (px−1)·py x-messages and px·(py−1) y-messages.
    assert_eq!(xs, steps / 8 * 8 * 2 * 2);
    assert_eq!(ys, steps / 8 * 8 * 3);
    assert_eq!(t[6], [0; 4], "rank 6 is outside the 3 x 2 grid");
    // A corner rank sends downstream in 2 directions for the octants that start at it...
    // over all octants every rank with both neighbours in x sends x-faces in 8 octants.
    let middle = t[1]; // (1, 0): x neighbours on both sides, one y neighbour
    assert_eq!(middle[0], steps / 8 * (8 + 4));
}

#[test]
fn pingpong_incast_and_collectives() {
    let g = gen(&job("0-4", 2, "pingpong bytes=100 iterations=3"));
    let t = traffic(&g);
    for r in 0..4 {
        assert_eq!(t[r], [6, 600, 6, 600]);
    }
    assert_eq!(t[4], [0; 4], "odd rank out");
    let g = gen(&job("0-5", 1, "incast bytes=1KiB root=2"));
    let t = traffic(&g);
    assert_eq!(t[2], [0, 0, 5, 5 * 1024]);
    assert!(t.iter().enumerate().all(|(r, x)| r == 2 || *x == [1, 1024, 0, 0]));
    // Collectives through the library: message counts are the algorithms' closed forms.
    let count = |text: &str| traffic(&gen(text)).iter().map(|x| x[0]).sum::<u64>();
    let (p, p2) = (6u64, 4u64);
    assert_eq!(count(&job("0-5", 1, "allreduce bytes=8 alg=recdoub")), p2 * 2 + 2 * (p - p2));
    assert_eq!(count(&job("0-5", 1, "allreduce bytes=8 alg=ring")), 2 * p * (p - 1));
    assert_eq!(count(&job("0-5", 1, "bcast bytes=8 root=3")), p - 1);
    assert_eq!(count(&job("0-5", 1, "reduce bytes=8 alg=linear")), p - 1);
    assert_eq!(count(&job("0-5", 1, "alltoall bytes=8 alg=pairwise")), p * (p - 1));
    assert_eq!(count(&job("0-5", 2, "barrier iterations=2")), 4 * p * 3); // ⌈log₂ 6⌉ = 3
    assert_eq!(count(&job("0-5", 1, "bcast bytes=1MiB alg=chain:256KiB")), (p - 1) * 4);
}

#[test]
fn structure_is_the_trace_converters() {
    let g = gen(&job("0-7", 2, "halo3d x=1KiB\n[MOTIF] allreduce bytes=8\n[MOTIF] pingpong"));
    assert_eq!(g.order_kind(), OrderKind::AnyProtocol);
    let (off, ids) = g.by_rank();
    for r in 0..8 {
        let ops = &ids[off[r]..off[r + 1]];
        // The last op of every rank is the final calc (MPI_Finalize).
        assert_eq!(g.kind(*ops.last().unwrap()), Kind::Calc);
        for &v in ops {
            if g.kind(v) == Kind::Calc {
                continue;
            }
            assert_ne!(g.partner(v), NONE);
            // Point-to-point ops require exactly the calc before their call; collective ops
            // the calc or a previous round's ops.
            assert!(g.preds(v).all(|(q, d)| d == Dep::Requires && g.rank(q) == r as u32));
            assert!(g.preds(v).count() >= 1);
        }
    }
    // Every motif op is preceded by a calc in insertion order (op, then the calc before it).
    let mut calcs = 0;
    let mut ops = 0;
    for v in 0..g.len() as u32 {
        if g.kind(v) == Kind::Calc {
            calcs += 1;
        } else {
            ops += 1;
        }
    }
    assert!(calcs > ops / 2);
}

#[test]
fn latency_sensitivity_of_simple_chains() {
    // Two ranks exchanging a halo: one latency per iteration on the critical path.
    let mut g = gen(&job("0-1", 5, "halo2d px=2 py=1 x=8 compute=10us"));
    assert_eq!(lambda_l(&mut g, 1000.0), 5);
    // A ping-pong round trip: two latencies per repeat.
    let mut g = gen(&job("0-1", 1, "pingpong bytes=8 iterations=7"));
    assert_eq!(lambda_l(&mut g, 1000.0), 14);
    // Incast: one latency.
    let mut g = gen(&job("0-7", 1, "incast bytes=8"));
    assert_eq!(lambda_l(&mut g, 1000.0), 1);
}

#[test]
fn compute_is_seeded_and_distributed() {
    let text = job("0-3", 50, "compute time=10us dist=gaussian sd=2us");
    let calc = |g: &ExecGraph| -> Vec<u64> { (0..g.len() as u32).filter(|&v| g.kind(v) == Kind::Calc).map(|v| g.val(v)).collect() };
    let (a, b, c) = (gen_seed(&text, 5), gen_seed(&text, 5), gen_seed(&text, 6));
    assert_eq!(calc(&a), calc(&b));
    assert_ne!(calc(&a), calc(&c));
    // Without MPI calls the 50 draws of a rank merge into its final calc.
    let (off, ids) = a.by_rank();
    let totals: Vec<u64> = (0..4).map(|r| ids[off[r]..off[r + 1]].iter().map(|&v| a.val(v)).sum()).collect();
    for t in &totals {
        assert!((*t as f64 - 500_000.0).abs() < 5.0 * 2000.0 * 50f64.sqrt(), "{totals:?}");
    }
    // vary=rank: one draw per rank, repeated.
    let g = gen(&job("0-1", 3, "compute time=10us dist=uniform spread=5us vary=rank\n[MOTIF] barrier"));
    let (off, ids) = g.by_rank();
    let firsts: Vec<u64> = ids[off[0]..off[1]].iter().filter(|&&v| g.kind(v) == Kind::Calc && g.val(v) > 0).map(|&v| g.val(v)).collect();
    assert_eq!(firsts.len(), 3);
    assert!(firsts.iter().all(|&x| x == firsts[0]) && (5000..=15000).contains(&firsts[0]));
    // Constant compute: exactly iterations x time per rank.
    let g = gen(&job("0-2", 4, "compute time=1.5us\n[MOTIF] allreduce"));
    let (off, ids) = g.by_rank();
    assert_eq!(ids[off[1]..off[2]].iter().filter(|&&v| g.kind(v) == Kind::Calc).map(|&v| g.val(v)).sum::<u64>(), 6000);
}

#[test]
fn jobs_side_by_side_and_every() {
    let g = gen(
        "[JOB] a\n[RANKS] 4-7,0\n[ITERATIONS] 10\n[MOTIF] allreduce bytes=8 every=5\n\n[JOB] b\n[NID_LIST] 1-3\n[MOTIF] Init\n[MOTIF] pingpong\n[MOTIF] Fini\n",
    );
    assert_eq!(g.num_ranks(), 8);
    let t = traffic(&g);
    // job a: 5 ranks, recdoub: 4·2 + 2·1 = 10 messages per allreduce, 2 allreduces
    assert_eq!([0, 4, 5, 6, 7].iter().map(|&r| t[r][0]).sum::<u64>(), 20);
    // job b: ranks 1, 2 ping-pong, rank 3 idle
    assert_eq!(t[1], [1, 8, 1, 8]);
    assert_eq!(t[3], [0; 4]);
    // messages never cross jobs
    for v in 0..g.len() as u32 {
        if g.kind(v) == Kind::Send {
            let a = [0, 4, 5, 6, 7].contains(&g.rank(v));
            assert_eq!(a, [0, 4, 5, 6, 7].contains(&g.peer(v)));
        }
    }
}

#[test]
fn errors_name_the_line() {
    let e = err("[JOB] a\n[RANKS] 0-3\n\n[MOTIF] halo3d px=2 py=2 pz=2\n");
    assert_eq!(e, "t.job:4: halo3d: the given grid dimensions need more ranks than the job has (4)");
    assert_eq!(err("[JOB] a\n[RANKS] 0-3\n[MOTIF] halo2d x=3XB\n"), "t.job:3: halo2d: x: unknown size unit 'XB' in '3XB' (use B, KiB, MiB, GiB, KB, MB, GB)");
    assert_eq!(err("# nothing\n"), "t.job: no [JOB] in the file; expected [JOB] name, [RANKS] list and [MOTIF] lines");
    assert_eq!(err("[JOB] a\n[RANKS] 0-3\n[JOB] b\n"), "t.job:1: job 'a' has no [MOTIF] lines");
    assert_eq!(err("[JOB] a\n[RANKS] 0-3\n[MOTIF] barrier\n[JOB] b\n[RANKS] 3-4\n"), "t.job:5: rank 3 is already in job 'a' (line 1); jobs use disjoint ranks");
    assert_eq!(err("[JOB] a\n[RANKS] 0\n[MOTIF] pingpong\n"), "t.job:3: pingpong: needs at least 2 ranks, the job has 1");
    assert_eq!(err("[JOB] a\n[RANKS] 0-1\n[MOTIF] compute time=1us dist=gaussian\n"), "t.job:3: compute: dist=gaussian needs sd=");
}

#[test]
fn canonical_text_resolves_defaults() {
    let f = JobFile::parse("[JOB]x # comment\n[NID_LIST]\t0-11\n[MOTIF] HALO3D z=1KiB\n[MOTIF] sweep3d\n", "t.job").unwrap();
    assert_eq!(
        f.canonical(),
        "world 12\njob 1 x ranks=12 iterations=1 list=0-11\n\
         motif 3 halo3d px=3 py=2 pz=2 x=8192 y=8192 z=1024 periodic=0 compute=0 iterations=1 every=1\n\
         motif 4 sweep3d px=4 py=3 nx=64 ny=64 nz=64 kba=8 angles=6 mmi=3 xbytes=4224 ybytes=3072 compute=0 iterations=1 every=1\n"
    );
}

/// A builder with `g`'s ops added in `order` (which must list each rank's ops in local
/// order, so local indices and message matching are unchanged).
fn rebuild(g: &ExecGraph, order: &[u32]) -> latitude_core::GraphBuilder {
    let mut b = latitude_core::GraphBuilder::new(g.num_ranks());
    let mut id = vec![0u32; g.len()];
    for &v in order {
        let op = match g.kind(v) {
            Kind::Calc => latitude_core::graph::Op::calc(g.val(v)),
            Kind::Send => latitude_core::graph::Op::send(g.val(v), g.peer(v), g.tag(v)),
            Kind::Recv => latitude_core::graph::Op::recv(g.val(v), g.peer(v), g.tag(v)),
        };
        id[v as usize] = b.add(g.rank(v), op).unwrap();
    }
    for &v in order {
        for (q, d) in g.preds(v) {
            b.dep(id[v as usize], id[q as usize], d).unwrap();
        }
    }
    b
}

/// (rank, local) of every op with its partner's, and T with λ_L at a few points.
fn fingerprint(mut g: ExecGraph) -> (Vec<(u32, u32, u32, u32)>, Vec<(i128, u64)>) {
    let mut pairs: Vec<(u32, u32, u32, u32)> =
        (0..g.len() as u32).filter(|&v| g.partner(v) != NONE).map(|v| (g.rank(v), g.local(v), g.rank(g.partner(v)), g.local(g.partner(v)))).collect();
    pairs.sort_unstable();
    let plan = Plan::prepare(&mut g, Model { eager_limit: 1024, ..Model::default() }).unwrap();
    let t = [0.0, 800.0, 5000.0]
        .iter()
        .map(|&l| {
            let pr = predict(&g, &plan, &Flat, &Point::from_ns(&[l, 300.0, 0.0, 0.01, 0.0]).unwrap()).unwrap();
            (pr.t, pr.right[p::L])
        })
        .collect();
    (pairs, t)
}

#[test]
fn in_order_fast_path_is_taken_and_agrees_with_finish() {
    let g = gen(&job("0-11", 3, "halo3d x=4KiB periodic=1\n[MOTIF] allreduce bytes=2KiB\n[MOTIF] sweep3d px=4 py=3 nz=8 kba=4 angles=2 mmi=1"));
    // Kept in emission order: each rank's ops are numbered in program order along the order.
    let mut last = [None; 12];
    for v in 0..g.len() as u32 {
        let r = g.rank(v) as usize;
        assert!(last[r].is_none_or(|l| l < g.local(v)), "rank {r} op {v} out of program order");
        last[r] = Some(g.local(v));
    }
    let stored: Vec<u32> = (0..g.len() as u32).collect();
    let kept = rebuild(&g, &stored).finish_in_order().unwrap();
    assert_eq!((0..g.len() as u32).map(|v| kept.local(v)).collect::<Vec<_>>(), (0..g.len() as u32).map(|v| g.local(v)).collect::<Vec<_>>());
    let reordered = rebuild(&g, &stored).finish().unwrap();
    assert_eq!(fingerprint(kept), fingerprint(reordered));
    // Rank by rank (GOAL style) is not a valid order: the fast path falls back to ordering,
    // with the same result as finish.
    let (off, ids) = g.by_rank();
    let a = rebuild(&g, &ids).finish_in_order().unwrap();
    let b = rebuild(&g, &ids).finish().unwrap();
    assert_eq!(
        (0..a.len() as u32).map(|v| (a.rank(v), a.local(v))).collect::<Vec<_>>(),
        (0..b.len() as u32).map(|v| (b.rank(v), b.local(v))).collect::<Vec<_>>()
    );
    assert_eq!(fingerprint(a), fingerprint(g));
    let _ = off;
}

#[test]
fn in_order_fast_path_on_random_programs() {
    use latitude_core::gen::random::{random_graph, RandomSpec};
    for seed in 0..20 {
        let g = random_graph(&RandomSpec { ranks: 5, rounds: 12, seed, ..Default::default() }).unwrap();
        let (_, ids) = g.by_rank();
        let fast = rebuild(&g, &ids).finish_in_order().unwrap();
        assert_eq!(fingerprint(fast), fingerprint(g.clone()), "seed {seed}");
    }
    // Unmatched messages are reported as by finish.
    let mut b = latitude_core::GraphBuilder::new(2);
    b.add(0, latitude_core::graph::Op::send(8, 1, 3)).unwrap();
    let e = b.finish_in_order().unwrap_err().to_string();
    assert!(e.contains("unmatched send of 8 bytes from rank 0 to rank 1 tag 3"), "{e}");
}

#[test]
fn in_order_keeps_a_valid_insertion_order_that_ordering_would_change() {
    use latitude_core::graph::Op;
    // Added as b0, r, a0, s, b1, a1 (valid: b1 after s, a1 after r); the general ordering
    // emits a1 before b1.
    let build = || {
        let mut b = latitude_core::GraphBuilder::new(2);
        let b0 = b.add(1, Op::calc(5)).unwrap();
        let r = b.add(1, Op::recv(8, 0, 0)).unwrap();
        let a0 = b.add(0, Op::calc(7)).unwrap();
        let s = b.add(0, Op::send(8, 1, 0)).unwrap();
        let b1 = b.add(1, Op::calc(1)).unwrap();
        let a1 = b.add(0, Op::calc(2)).unwrap();
        for (x, y) in [(r, b0), (s, a0), (b1, r), (a1, s)] {
            b.requires(x, y).unwrap();
        }
        b
    };
    let kept = build().finish_in_order().unwrap();
    let ranks: Vec<u32> = (0..6).map(|v| kept.rank(v)).collect();
    assert_eq!(ranks, [1, 1, 0, 0, 1, 0]);
    let general = build().finish().unwrap();
    assert_eq!((0..6).map(|v| general.rank(v)).collect::<Vec<_>>(), [1, 1, 0, 0, 0, 1]);
    assert_eq!(fingerprint(kept), fingerprint(general));
}

#[test]
fn declared_pairs_are_kept_only_when_they_are_a_consistent_matching() {
    use latitude_core::graph::Op;
    // Rank 0 sends tags 1 then 2 to rank 1, which receives them in the same order.
    let build = |declare: &[(u32, u32)]| {
        let mut b = latitude_core::GraphBuilder::new(2);
        // Added in an order the fast path keeps (s2 after r1, the partner of what it requires).
        let s1 = b.add(0, Op::send(8, 1, 1)).unwrap();
        let r1 = b.add(1, Op::recv(8, 0, 1)).unwrap();
        let s2 = b.add(0, Op::send(16, 1, 2)).unwrap();
        let r2 = b.add(1, Op::recv(16, 0, 2)).unwrap();
        b.requires(s2, s1).unwrap();
        b.requires(r2, r1).unwrap();
        for &(s, r) in declare {
            b.pair(s, r);
        }
        b.finish_in_order().unwrap()
    };
    // Right, crossed (tags differ) and incomplete declarations: always the MPI matching.
    for declare in [&[(0, 1), (2, 3)][..], &[(0, 3), (2, 1)], &[(0, 1)], &[]] {
        let g = build(declare);
        assert_eq!((0..4).map(|v| g.partner(v)).collect::<Vec<_>>(), [1, 0, 3, 2], "declared {declare:?}");
    }
}
