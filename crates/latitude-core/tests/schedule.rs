//! Trace → graph conversion: Schedgen's worked example (docs/reference/schedgen.md §7) op for op, the liballprof
//! fixture, and one handmade trace per modelled feature (requests, persistent operations,
//! wildcards, sub-communicators, nonblocking collectives).

use std::fs;
use std::path::PathBuf;

use latitude_core::collectives::Selection;
use latitude_core::engine::{predict, Plan};
use latitude_core::graph::{Dep, ExecGraph, Kind, ANY};
use latitude_core::model::{Model, Point};
use latitude_core::net::Flat;
use latitude_core::schedule::{schedule_path, ScheduleOptions, Scheduled};

/// A fresh directory with one file per rank.
fn trace_dir(name: &str, ranks: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("latitude-sched-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for (r, text) in ranks.iter().enumerate() {
        fs::write(dir.join(format!("t-{r}.txt")), text).unwrap();
    }
    dir
}

fn run(dir: &std::path::Path, opts: &ScheduleOptions) -> Scheduled {
    schedule_path(dir.to_str().unwrap(), opts, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn run_err(dir: &std::path::Path, opts: &ScheduleOptions) -> String {
    match schedule_path(dir.to_str().unwrap(), opts, &mut |_, _| {}) {
        Ok(_) => panic!("no error"),
        Err(e) => e.to_string(),
    }
}

/// Rank r's ops in source order as text (tags left out), and its edges as (a, b, irequires)
/// with 1-based labels.
fn rank_ops(g: &ExecGraph, r: u32) -> (Vec<String>, Vec<(u32, u32, bool)>) {
    let (off, ids) = g.by_rank();
    let mut ops = Vec::new();
    let mut edges = Vec::new();
    for &v in &ids[off[r as usize]..off[r as usize + 1]] {
        ops.push(match g.kind(v) {
            Kind::Calc => format!("calc {}", g.val(v)),
            Kind::Send => format!("send {}b to {}", g.val(v), g.peer(v)),
            Kind::Recv if g.peer(v) == ANY => format!("recv {}b from -1", g.val(v)),
            Kind::Recv => format!("recv {}b from {}", g.val(v), g.peer(v)),
        });
        for (p, d) in g.preds(v) {
            edges.push((g.local(v) + 1, g.local(p) + 1, d == Dep::Irequires));
        }
    }
    edges.sort();
    (ops, edges)
}

const R0_SECTION8: &str = "# rank 0 of the reference's worked example (docs/reference/schedgen.md §7)\n\
MPI_Init:-:1:2:100\n\
MPI_Isend:150:1000:1:1,4,4:1:9:0,0,2:5000:152\n\
MPI_Irecv:160:1000:1:1,4,4:1:9:0,0,2:5008:161\n\
MPI_Waitall:200:2:5000:0:230\n\
MPI_Barrier:240:0,0,2:250\n\
MPI_Finalize:300:-\n";

const R1_SECTION8: &str = "MPI_Init:-:1:2:100\n\
MPI_Irecv:150:1000:1:1,4,4:0:9:0,1,2:5000:152\n\
MPI_Isend:160:1000:1:1,4,4:0:9:0,1,2:5008:161\n\
MPI_Waitall:200:2:5000:0:230\n\
MPI_Barrier:240:0,1,2:250\n\
MPI_Finalize:300:-\n";

#[test]
fn reproduces_schedgens_worked_example() {
    let dir = trace_dir("sec8", &[R0_SECTION8, R1_SECTION8]);
    // Schedgen drops the time inside the nonblocking calls (here 2 µs and 1 µs of Isends).
    let opts = ScheduleOptions { coll: Selection::schedgen(), issue_time: false, ..Default::default() };
    let s = run(&dir, &opts);
    let (ops, edges) = rank_ops(&s.graph, 0);
    let want_ops = [
        "send 4b to 1",
        "calc 50000",
        "recv 4b from 1",
        "calc 8000",
        "calc 0",
        "calc 39000",
        "send 1b to 1",
        "recv 1b from 1",
        "calc 0",
        "calc 10000",
        "calc 50000",
    ];
    assert_eq!(ops, want_ops);
    // l1 requires l2; l3 requires l4; l4 irequires l1; l5 requires l1, l3, l6; l6 irequires l3;
    // l9 requires l7, l8; l7, l8 require l10; l10 requires l5; l11 requires l9 — except that
    // Schedgen's `l4 irequires l1` is written as the identical `l4 requires l2` (l1's only
    // predecessor), and `l6 irequires l3` as `l6 requires l4`.
    let mut want = vec![
        (1, 2, false),
        (3, 4, false),
        (4, 2, false),
        (5, 1, false),
        (5, 3, false),
        (5, 6, false),
        (6, 4, false),
        (9, 7, false),
        (9, 8, false),
        (7, 10, false),
        (8, 10, false),
        (10, 5, false),
        (11, 9, false),
    ];
    want.sort();
    assert_eq!(edges, want);
    assert_eq!(s.stats.collectives.get("barrier schedgen"), Some(&2));
}

#[test]
fn converts_the_liballprof_fixture() {
    // liballprof's own sample trace (4 ranks, 5 broadcasts), vendored in tests/data.
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/liballprof-bcast/trace_bcast-0.dat");
    for (coll, alg) in [(Selection::schedgen(), "bcast schedgen"), (Selection::default(), "bcast binomial")] {
        let opts = ScheduleOptions { coll, ..Default::default() };
        let s = schedule_path(fixture, &opts, &mut |_, _| {}).unwrap();
        assert_eq!(s.graph.num_ranks(), 4);
        assert_eq!(s.stats.collectives.get(alg), Some(&20), "{:?}", s.stats.collectives);
        let (bytes, msgs) = s.graph.message_stats();
        assert_eq!((msgs, bytes), (15, 15 * 12));
        // 1 µs of computation before the first bcast... and 2 µs between them, 1 µs at the end.
        let (ops, _) = rank_ops(&s.graph, 3);
        let calcs: Vec<&String> = ops.iter().filter(|o| o.starts_with("calc") && *o != "calc 0").collect();
        assert_eq!(calcs, ["calc 2000", "calc 1000", "calc 1000", "calc 1000", "calc 1000", "calc 1000"]);
        let mut g = s.graph;
        let plan = Plan::prepare(&mut g, Model::default()).unwrap();
        let pr = predict(&g, &plan, &Flat, &Point::from_ns(&[1000.0, 0.0, 0.0, 0.0, 0.0]).unwrap()).unwrap();
        // The root never waits (eager sends, o = 0), so the bcasts pipeline: 7 µs of the
        // root's computation, then the last bcast's two hops to the deepest leaf.
        assert_eq!(pr.runtime_ns(), 7000.0 + 2.0 * 1000.0);
    }
}

#[test]
fn request_arrays_with_mpich_stride_are_detected() {
    let r0 = "MPI_Init:-:1:2:0\n\
MPI_Comm_rank:1:1140850688,0,2:9:2\n\
MPI_Isend:10:1:1:1,4,4:1:3:1140850688,0,2:600:11\n\
MPI_Isend:12:1:1:1,4,4:1:4:1140850688,0,2:604:13\n\
MPI_Waitall:20:2:600:0:30\n\
MPI_Finalize:40:-\n";
    let r1 = "MPI_Init:-:1:2:0\n\
MPI_Recv:10:1:1:1,4,4:-2:3:1140850688,1,2:0:31\n\
MPI_Recv:32:1:1:1,4,4:0:4:1140850688,1,2:0:33\n\
MPI_Finalize:40:-\n";
    let dir = trace_dir("mpich", &[r0, r1]);
    let s = run(&dir, &ScheduleOptions::default());
    assert_eq!(s.stats.request_size, Some(4));
    assert_eq!(s.stats.mpi, "MPICH");
    // MPICH's ANY_SOURCE is -2: without a '#@ status' the receive stays a wildcard.
    assert_eq!(s.stats.unresolved_wildcards, 1);
    let (ops, edges) = rank_ops(&s.graph, 0);
    assert_eq!(ops[4], "calc 0");
    assert!(edges.contains(&(5, 1, false)) && edges.contains(&(5, 3, false)), "{edges:?}");
}

/// Plain traces: persistent requests started with Startall (MPICH stride 4, detected from
/// the persistent requests) and completed by Waitall; a Send to MPI_PROC_NULL issues nothing.
#[test]
fn plain_persistent_requests_and_proc_null() {
    let rank = |r: u32| {
        let other = 1 - r;
        format!(
            "MPI_Init:-:1:2:0\n\
MPI_Send_init:1:9:2:1,4,4:{other}:5:1140850688,{r},2:700:2\n\
MPI_Recv_init:3:9:2:1,4,4:{other}:5:1140850688,{r},2:704:4\n\
MPI_Startall:10:2:700:11\n\
MPI_Waitall:12:2:700:0:20\n\
MPI_Startall:30:2:700:31\n\
MPI_Waitall:32:2:700:0:40\n\
MPI_Send:41:9:2:1,4,4:-1:5:1140850688,{r},2:42\n\
MPI_Request_free:43:700:44\n\
MPI_Finalize:50:-\n"
        )
    };
    let (r0, r1) = (rank(0), rank(1));
    let dir = trace_dir("persistent", &[&r0, &r1]);
    let s = run(&dir, &ScheduleOptions::default());
    assert_eq!(s.stats.request_size, Some(4));
    let (bytes, msgs) = s.graph.message_stats();
    assert_eq!((msgs, bytes), (4, 32));
    // Each Waitall joins both started operations. The computation after the first Startall
    // (10-11 µs) runs from its start to the Waitall at 12 µs: the call's own time is kept.
    let (ops, edges) = rank_ops(&s.graph, 0);
    assert_eq!(&ops[..5], ["send 8b to 1", "recv 8b from 1", "calc 10000", "calc 0", "calc 2000"]);
    assert!(edges.contains(&(4, 1, false)) && edges.contains(&(4, 2, false)), "{edges:?}");
    // Two Startalls of 1 µs on each of the two ranks counted; dropped (as Schedgen), the
    // computation starts at the call's end.
    assert_eq!((s.stats.issue_calls, s.stats.issue_ns), (4, 4000));
    let s = run(&dir, &ScheduleOptions { issue_time: false, ..Default::default() });
    assert_eq!((s.stats.issue_calls, s.stats.issue_ns), (0, 0));
    assert_eq!(rank_ops(&s.graph, 0).0[4], "calc 1000");
}

/// Our trace format: wildcards resolved from '#@ status', Waitany by '#@ done', persistent
/// requests, a sub-communicator collective and a nonblocking one.
#[test]
fn extension_lines_make_the_conversion_exact() {
    let head = |r: u32| {
        format!(
            "#@ latitude-trace 1\n#@ world rank={r} size=4\n#@ request_size 8\n#@ const any_source=-1 any_tag=-1 proc_null=-2\n#@ comm 100 seq=0 world=0-3\n#@ comm 200 seq=0 world={r}\n\nMPI_Init:-:1:2:0.000\n"
        )
    };
    let mut ranks = Vec::new();
    for r in 0..4u32 {
        let mut t = head(r);
        let half = if r % 2 == 0 { "0,2" } else { "1,3" };
        let hr = r / 2;
        // 1: split into even/odd halves (record index 1)
        t += &format!("MPI_Comm_split:1.000:100,{r},4:{}:{hr}:7000:2.000\n#@ comm 300 seq=0 world={half}\n", r % 2);
        // 2: allreduce on the half
        t += &format!("MPI_Allreduce:3.000:1:2:4:10,8,8:3:300,{hr},2:4.000\n");
        if r == 0 {
            // 3, 4: two wildcard Irecvs, 5: Waitany completing record 4, 6: Waitany completing 3
            t += "MPI_Irecv:5.000:1:1:1,4,4:-1:-1:100,0,4:800:5.100\n";
            t += "MPI_Irecv:5.200:1:1:1,4,4:-1:-1:100,0,4:808:5.300\n";
            t += "MPI_Waitany:6.000:2:800:900:0:7.000\n#@ done 4\n#@ status call=4 src=2 tag=5 bytes=4\n";
            t += "MPI_Waitany:7.500:2:800:900:0:8.000\n#@ done 3\n#@ status call=3 src=1 tag=6 bytes=4\n";
        } else if r == 1 || r == 2 {
            let tag = if r == 1 { 6 } else { 5 };
            t += &format!("MPI_Send:5.000:1:1:1,4,4:0:{tag}:100,{r},4:5.500\n");
            t += "MPI_Comm_rank:5.600:100,0,4:1:5.700\n";
            t += "MPI_Comm_rank:5.800:100,0,4:1:5.900\n";
            t += "MPI_Comm_rank:5.950:100,0,4:1:5.990\n";
        } else {
            for _ in 0..4 {
                t += "MPI_Comm_rank:5.600:100,3,4:1:5.700\n";
            }
        }
        // 7: Send_init to the right, 8: Recv_init from the left, 9: Startall, 10: Waitall
        let (right, left) = ((r + 1) % 4, (r + 3) % 4);
        t += &format!("MPI_Send_init:9.000:1:2:1,4,4:{right}:8:100,{r},4:900:9.100\n");
        t += &format!("MPI_Recv_init:9.200:1:2:1,4,4:{left}:8:100,{r},4:908:9.300\n");
        t += "MPI_Startall:10.000:2:900:10.100\n#@ start 7,8\n";
        t += "MPI_Waitall:11.000:2:900:0:12.000\n#@ done 7,8\n";
        // 11: Ibcast from 0 on the world, 12: Wait
        t += &format!("MPI_Ibcast:13.000:1:100:1,4,4:0:100,{r},4:950:13.500\n");
        t += "MPI_Wait:20.000:950:0:21.000\n#@ done 11\n";
        t += "MPI_Finalize:30.000:-\n#@ end finalize\n";
        ranks.push(t);
    }
    let refs: Vec<&str> = ranks.iter().map(|s| s.as_str()).collect();
    let dir = trace_dir("ext", &refs);
    let s = run(&dir, &ScheduleOptions::default());
    assert!(s.stats.extended);
    assert_eq!(s.stats.unresolved_wildcards, 0);
    assert_eq!(s.graph.wildcard_recvs(), 0);
    assert_eq!(s.stats.collectives.get("allreduce recdoub"), Some(&4));
    assert_eq!(s.stats.collectives.get("bcast binomial"), Some(&4));
    assert!(s.stats.unmodelled.contains_key("MPI_Comm_split"));
    // The sub-communicator allreduce pairs world ranks 0-2 and 1-3.
    let g = &s.graph;
    let mut pairs: Vec<(u32, u32)> = (0..g.len() as u32).filter(|&v| g.kind(v) == Kind::Send && g.val(v) == 32).map(|v| (g.rank(v), g.peer(v))).collect();
    pairs.sort();
    assert_eq!(pairs, vec![(0, 2), (1, 3), (2, 0), (3, 1)]);
    // Rank 0: l1/l2 allreduce, l3 collop, l4 calc, l5 Irecv (record 3), l6 calc, l7 Irecv
    // (record 4), l8 calc, l9 Waitany joining record 4, l10, l11 Waitany joining record 3.
    let (ops, edges) = rank_ops(g, 0);
    assert_eq!(ops[4], "recv 4b from 1");
    assert_eq!(ops[6], "recv 4b from 2");
    assert!(edges.contains(&(9, 7, false)) && edges.contains(&(11, 5, false)), "{ops:?} {edges:?}");
    // The Ibcast overlaps the 7 µs computation before its Wait (its own 0.5 µs included):
    // that calc follows the issue (a calc), not the collective's completion.
    let (off, ids) = g.by_rank();
    let v = ids[off[0]..off[1]].iter().copied().find(|&v| g.kind(v) == Kind::Calc && g.val(v) == 7000).unwrap();
    let preds: Vec<_> = g.preds(v).collect();
    assert_eq!(preds.len(), 1);
    assert_eq!(g.kind(preds[0].0), Kind::Calc);
    assert!(g.val(preds[0].0) > 0);
    let mut g = s.graph;
    Plan::prepare(&mut g, Model::default()).unwrap();
}

/// A collective on MPI_COMM_SELF sends nothing but must not cut the computation chain.
#[test]
fn collectives_without_messages_keep_the_chain() {
    let r = "#@ latitude-trace 1\n#@ world rank=0 size=1\n#@ comm 1 seq=0 world=0\n#@ comm 2 seq=0 world=0\n\n\
MPI_Init:-:1:2:0\n\
MPI_Allreduce:100:1:2:1:10,8,8:3:2,0,1:101\n\
MPI_Ibarrier:200:2,0,1:9:201\n\
MPI_Wait:300:9:0:301\n#@ done 2\n\
MPI_Finalize:400:-\n";
    let dir = trace_dir("self", &[r]);
    let mut g = run(&dir, &ScheduleOptions::default()).graph;
    let plan = Plan::prepare(&mut g, Model::default()).unwrap();
    let pr = predict(&g, &plan, &Flat, &Point::from_ns(&[1000.0, 0.0, 0.0, 0.0, 0.0]).unwrap()).unwrap();
    // 100 + 99 + 100 + 99 µs of computation between the calls, in sequence (the Ibarrier's
    // own 1 µs is kept in the computation after it).
    assert_eq!(pr.runtime_ns(), 398_000.0);
}

#[test]
fn malformed_traces_name_file_and_line() {
    let ok = "MPI_Init:-:1:2:0\nMPI_Finalize:5:-\n";
    for (name, r0, want) in [
        (
            "unmatched",
            "MPI_Init:-:1:2:0\nMPI_Send:1:1:1:1,4,4:1:0:5,0,2:2\nMPI_Finalize:5:-\n",
            "t-0.txt:2: send to rank 1 (tag 0 on MPI_COMM_WORLD) has no matching receive",
        ),
        ("first", "MPI_Send:1:1:1:1,4,4:1:0:5,0,2:2\n", "t-0.txt:1: expected MPI_Init or MPI_Init_thread as the first call, got MPI_Send"),
        ("peer", "MPI_Init:-:1:2:0\nMPI_Send:1:1:1:1,4,4:7:0:5,0,2:2\n", "t-0.txt:2: MPI_Send: peer rank 7 outside its communicator of 2 ranks"),
        ("root", "MPI_Init:-:1:2:0\nMPI_Bcast:1:1:1:1,4,4:5:5,0,2:2\n", "t-0.txt:2: MPI_Bcast: root 5 outside its communicator of 2 ranks"),
        ("after", "MPI_Init:-:1:2:0\nMPI_Finalize:5:-\nMPI_Barrier:6:5,0,2:7\n", "t-0.txt:3: MPI_Barrier after MPI_Finalize"),
    ] {
        let dir = trace_dir(name, &[r0, ok]);
        let e = run_err(&dir, &ScheduleOptions::default());
        assert!(e.contains(want), "{name}: {e}");
    }
}
