//! Trace → graph conversion of cancelled requests, folded polls and unresolved wildcards:
//! handmade traces in the tracer's format, one per case.

use std::fs;
use std::path::PathBuf;

use latitude_core::engine::{predict, Plan};
use latitude_core::graph::{ExecGraph, Kind};
use latitude_core::model::{Model, Point};
use latitude_core::net::Flat;
use latitude_core::schedule::{schedule_path, ScheduleOptions, Scheduled};

fn trace_dir(name: &str, ranks: &[String]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("latitude-sched-req-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for (r, text) in ranks.iter().enumerate() {
        fs::write(dir.join(format!("t-{r}.txt")), text).unwrap();
    }
    dir
}

fn run(dir: &std::path::Path) -> Scheduled {
    schedule_path(dir.to_str().unwrap(), &ScheduleOptions::default(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// Our header for rank r of n (Open MPI constants, world communicator handle 100).
fn head(r: u32, n: u32) -> String {
    format!("#@ latitude-trace 1\n#@ world rank={r} size={n}\n#@ request_size 8\n#@ const any_source=-1 any_tag=-1 proc_null=-2\n#@ comm 100 seq=0 world=0-{}\n#@ comm 200 seq=0 world={r}\n\nMPI_Init:-:1:2:0.000\n", n - 1)
}

fn messages(g: &ExecGraph) -> Vec<(u32, u32, u64)> {
    let mut m: Vec<_> = (0..g.len() as u32).filter(|&v| g.kind(v) == Kind::Send).map(|v| (g.rank(v), g.peer(v), g.val(v))).collect();
    m.sort();
    m
}

fn runtime(mut g: ExecGraph) -> i128 {
    let plan = Plan::prepare(&mut g, Model::default()).unwrap_or_else(|e| panic!("{e}"));
    predict(&g, &plan, &Flat, &Point::from_ns(&[1000.0, 0.0, 0.0, 0.0, 0.0]).unwrap()).unwrap().t
}

/// HPCC's ending: a wildcard receive and a persistent wildcard receive are cancelled (their
/// completions say so), a send is cancelled, a specific receive's cancellation fails and the
/// message it matched arrives. Only that message is left in the graph.
#[test]
fn cancelled_requests_leave_the_graph() {
    let mut r0 = head(0, 2);
    r0 += "MPI_Irecv:1.000:1:1:1,4,4:-1:-1:100,0,2:800:1.100\n"; // 1
    r0 += "MPI_Isend:2.000:1:1:1,4,4:1:3:100,0,2:808:2.100\n"; // 2
    r0 += "MPI_Irecv:3.000:1:1:1,4,4:1:4:100,0,2:816:3.100\n"; // 3
    r0 += "MPI_Cancel:4.000:800:4.100\n#@ cancel 1\n"; // 4
    r0 += "MPI_Cancel:5.000:808:5.100\n#@ cancel 2\n"; // 5
    r0 += "MPI_Cancel:6.000:816:6.100\n#@ cancel 3\n"; // 6
    r0 += "MPI_Waitall:7.000:3:800:0:9.000\n#@ done 1,2,3\n#@ cancelled 1\n#@ cancelled 2\n"; // 7
    r0 += "MPI_Recv_init:10.000:1:1:1,4,4:-1:5:100,0,2:900:10.100\n"; // 8
    r0 += "MPI_Start:11.000:900:11.100\n#@ start 8\n"; // 9
    r0 += "MPI_Cancel:12.000:900:12.100\n#@ cancel 8\n"; // 10
    r0 += "MPI_Test:13.000:900:904:0:13.100\n#@ done 8\n#@ cancelled 8\n"; // 11
    r0 += "MPI_Request_free:14.000:900:14.100\n#@ free 8\n"; // 12
    r0 += "MPI_Finalize:20.000:-\n#@ end finalize\n";
    let mut r1 = head(1, 2);
    r1 += "MPI_Send:2.000:1:1:1,4,4:0:4:100,1,2:3.000\n";
    r1 += "MPI_Finalize:20.000:-\n#@ end finalize\n";
    let s = run(&trace_dir("cancel", &[r0, r1]));
    assert_eq!((s.stats.cancelled_recvs, s.stats.cancelled_sends, s.stats.assumed_cancelled), (2, 1, 0));
    assert_eq!(s.stats.unresolved_wildcards, 0);
    assert_eq!(s.graph.wildcard_recvs(), 0);
    assert_eq!(messages(&s.graph), vec![(1, 0, 4)]);
    assert!(s.stats.notes.iter().any(|n| n.starts_with("3 cancelled requests (2 receives, 1 send)")), "{:?}", s.stats.notes);
    assert!(runtime(s.graph) > 0);
}

/// Cancelled and freed without completing (the outcome is never observed), and a plain
/// trace's MPI_Cancel (which never says): assumed cancelled.
#[test]
fn unobserved_cancellations_are_assumed() {
    let mut r0 = head(0, 1);
    r0 += "MPI_Irecv:1.000:1:1:1,4,4:-1:7:100,0,1:800:1.100\n"; // 1
    r0 += "MPI_Cancel:2.000:800:2.100\n#@ cancel 1\n";
    r0 += "MPI_Request_free:3.000:800:3.100\n#@ free 1\n";
    r0 += "MPI_Finalize:4.000:-\n#@ end finalize\n";
    let s = run(&trace_dir("cancel-free", &[r0]));
    assert_eq!((s.stats.assumed_cancelled, s.stats.unresolved_wildcards), (1, 0));
    assert!(s.stats.notes.iter().any(|n| n.contains("assumed cancelled")), "{:?}", s.stats.notes);

    let plain = "MPI_Init:-:1:2:0\nMPI_Irecv:1:1:1:1,4,4:-1:7:0,0,1:800:2\nMPI_Cancel:3:800:4\nMPI_Wait:5:800:0:6\nMPI_Finalize:9:-\n".to_string();
    let s = run(&trace_dir("cancel-plain", &[plain]));
    assert_eq!((s.stats.assumed_cancelled, s.stats.unresolved_wildcards), (1, 0));
    assert_eq!(s.graph.wildcard_recvs(), 0);
}

/// The computations of rank 0 (non-zero calcs) of a trace whose rank 0 posts an Irecv at 10 µs,
/// writes `polls` (records between 10 and 65 µs) and completes the receive with an MPI_Test at
/// `done_at` µs.
fn polled_calcs(name: &str, polls: &str, done_at: u32) -> (Scheduled, Vec<u64>) {
    let mut r0 = head(0, 2);
    r0 += "MPI_Irecv:10.000:1:1:1,4,4:1:0:100,0,2:800:10.000\n"; // 1
    r0 += polls;
    r0 += &format!("MPI_Test:{done_at}.000:800:804:0:{}.000\n#@ done 1\n", done_at + 1);
    r0 += "MPI_Finalize:100.000:-\n#@ end finalize\n";
    let mut r1 = head(1, 2);
    r1 += "MPI_Send:50.000:1:1:1,4,4:0:0:100,1,2:51.000\n";
    r1 += "MPI_Finalize:100.000:-\n#@ end finalize\n";
    let s = run(&trace_dir(name, &[r0, r1]));
    let g = &s.graph;
    let (off, ids) = g.by_rank();
    let calcs = ids[off[0]..off[1]].iter().filter(|&&v| g.kind(v) == Kind::Calc && g.val(v) > 0).map(|&v| g.val(v)).collect();
    (s, calcs)
}

/// A folded record of 1000 unsuccessful polls back to back (48 of its 50 µs inside the calls)
/// is waiting: MPI time, taken out of the computation between the Irecv and the Test that
/// completes it, as the time of a single unsuccessful Iprobe is. The Test that completes it
/// right after the polls moves nothing (a waiting loop has no poll interval to round to;
/// tests/schedule_polls.rs).
#[test]
fn waiting_polls_are_not_computation() {
    let polls = "MPI_Test:10.000:800:804:0:60.000\n#@ done -\n#@ polls n=1000 busy=48.000\nMPI_Iprobe:60.000:1:0:100,0,2:804:0:65.000\n";
    let (s, calcs) = polled_calcs("polls-wait", polls, 65);
    assert_eq!((s.stats.polls, s.stats.poll_records, s.stats.poll_ns, s.stats.poll_work_ns), (1001, 2, 53_000, 0));
    assert_eq!(s.stats.poll_shifts, 0);
    // 10 µs before the Irecv, 55 - 53 = 2 µs until the successful Test, 34 µs after it
    assert_eq!(calcs, vec![10_000, 2_000, 34_000]);
}

/// A fold with 20 of its 50 µs outside the calls is a work loop polling once per iteration
/// (HPCC's RandomAccess): its polls' time stays computation. A `busy` beyond the record's span
/// (the tracer's sampled estimate, inflated by a preempted poll) counts as the span. The Test
/// that ends the loop at 70 µs moves half its mean poll interval (60 µs over the polls before
/// it, / 2) of the computation before it to after it (tests/schedule_polls.rs).
#[test]
fn work_loop_polls_stay_computation() {
    let polls = "MPI_Test:10.000:800:804:0:60.000\n#@ done -\n#@ polls n=1000 busy=30.000\nMPI_Iprobe:60.000:1:0:100,0,2:804:0:65.000\n";
    let (s, calcs) = polled_calcs("polls-work", polls, 70);
    assert_eq!((s.stats.poll_ns, s.stats.poll_work_ns), (5_000, 30_000));
    assert_eq!(s.stats.poll_shift_ns, 29); // 60 µs / 1,001 polls / 2
    assert_eq!(calcs, vec![10_000, 55_000 - 29, 29_000 + 29]);

    let polls = "MPI_Test:10.000:800:804:0:60.000\n#@ done -\n#@ polls n=1000 busy=900.000\n";
    let (s, calcs) = polled_calcs("polls-inflated", polls, 70);
    assert_eq!((s.stats.poll_ns, s.stats.poll_work_ns), (50_000, 0));
    assert_eq!(calcs, vec![10_000, 10_000 - 30, 29_000 + 30]);
}

/// Wildcard receives a trace cannot resolve are named by file and line, with the reason.
#[test]
fn unresolved_wildcards_are_named() {
    let r0 = "MPI_Init:-:1:2:0\nMPI_Irecv:1:1:1:1,4,4:-1:7:0,0,2:800:2\nMPI_Wait:5:800:0:6\nMPI_Finalize:9:-\n".to_string();
    let r1 = "MPI_Init:-:1:2:0\nMPI_Send:1:1:1:1,4,4:0:7:0,1,2:2\nMPI_Finalize:9:-\n".to_string();
    let dir = trace_dir("wild-plain", &[r0, r1]);
    let s = run(&dir);
    assert_eq!(s.stats.unresolved_wildcards, 1);
    let note = s.stats.notes.iter().find(|n| n.contains("could not be resolved")).unwrap();
    assert!(note.contains(&format!("{}:2 (MPI_Irecv) is: a plain liballprof trace", dir.join("t-0.txt").display())), "{note}");

    let mut r0 = head(0, 1);
    r0 += "MPI_Irecv:1.000:1:1:1,4,4:-1:7:100,0,1:800:1.100\n";
    r0 += "MPI_Request_free:3.000:800:3.100\n#@ free 1\n";
    r0 += "MPI_Finalize:4.000:-\n#@ end finalize\n";
    let s = run(&trace_dir("wild-freed", &[r0]));
    let note = s.stats.notes.iter().find(|n| n.contains("could not be resolved")).unwrap();
    assert!(note.contains(":9 (MPI_Irecv) is: freed with MPI_Request_free before it completed"), "{note}");
}
