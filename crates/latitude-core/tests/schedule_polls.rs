//! Trace → graph conversion of work loops that poll (docs/schedule.md, "Polling"): the
//! completion that ends a work loop's polling moves half a poll interval of the computation
//! before it to after it, and nothing else does. Handmade traces in the tracer's format.

use std::fs;
use std::path::PathBuf;

use latitude_core::engine::{predict, Plan};
use latitude_core::graph::{ExecGraph, Kind};
use latitude_core::model::{Model, Point};
use latitude_core::net::Flat;
use latitude_core::schedule::{schedule_path, ScheduleOptions, Scheduled};

fn trace_dir(name: &str, ranks: &[String]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("latitude-sched-polls-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for (r, text) in ranks.iter().enumerate() {
        fs::write(dir.join(format!("t-{r}.txt")), text).unwrap();
    }
    dir
}

/// Our header for rank r of 2 (Open MPI constants, world communicator handle 100).
fn head(r: u32) -> String {
    format!("#@ latitude-trace 1\n#@ world rank={r} size=2\n#@ request_size 8\n#@ const any_source=-1 any_tag=-1 proc_null=-2\n#@ comm 100 seq=0 world=0-1\n#@ comm 200 seq=0 world={r}\n\nMPI_Init:-:1:2:0.000\n")
}

/// Rank 0 runs `body` (after MPI_Init at 0) and finalizes at `end` µs; rank 1 sends it one
/// message (tag 0) at `sent` µs and finalizes at 30 µs.
fn traced(name: &str, body: &str, sent: f64, end: f64) -> Scheduled {
    let r0 = format!("{}{body}MPI_Finalize:{end:.3}:-\n#@ end finalize\n", head(0));
    let r1 = format!("{}MPI_Send:{sent:.3}:1:1:1,4,4:0:0:100,1,2:{:.3}\nMPI_Finalize:30.000:-\n#@ end finalize\n", head(1), sent + 0.1);
    let dir = trace_dir(name, &[r0, r1]);
    schedule_path(dir.to_str().unwrap(), &ScheduleOptions::default(), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// The receive rank 0 posts at 10 µs (call index 1, request 800).
const IRECV: &str = "MPI_Irecv:10.000:1:1:1,4,4:1:0:100,0,2:800:10.000\n";

/// Rank 0 posts the receive, then `polls` (its polls and the completion); finalizes at 40 µs.
fn polled(name: &str, polls: &str, sent: f64) -> Scheduled {
    traced(name, &format!("{IRECV}{polls}"), sent, 40.0)
}

/// Rank 0's computations (every calc, in order, zero-length ones included).
fn calcs(g: &ExecGraph) -> Vec<u64> {
    let (off, ids) = g.by_rank();
    ids[off[0]..off[1]].iter().filter(|&&v| g.kind(v) == Kind::Calc).map(|&v| g.val(v)).collect()
}

/// T (ns) at latency L (ns), every other parameter 0 (the engine's T is in units of 10⁻⁹ ns).
fn runtime(mut g: ExecGraph, l_ns: &[f64]) -> Vec<i128> {
    let plan = Plan::prepare(&mut g, Model::default()).unwrap_or_else(|e| panic!("{e}"));
    l_ns.iter().map(|&l| predict(&g, &plan, &Flat, &Point::from_ns(&[l, 0.0, 0.0, 0.0, 0.0]).unwrap()).unwrap().t / 1_000_000_000).collect()
}

/// apps/gaps --pattern poll: one unsuccessful MPI_Test (0.1 µs), 3.9 µs of work, the MPI_Test
/// that sees the message. The poll interval is 4 µs, so 2 µs of the work before the
/// completion moves after it.
const POLL_THEN_TEST: &str = "MPI_Test:10.000:800:804:0:10.100\n#@ done -\nMPI_Test:14.000:800:804:0:14.100\n#@ done 1\n";
/// The same polls ended by an MPI_Wait: it blocks until the arrival itself, no poll to round to.
const POLL_THEN_WAIT: &str = "MPI_Test:10.000:800:804:0:10.100\n#@ done -\nMPI_Wait:14.000:800:0:14.100\n#@ done 1\n";

#[test]
fn the_test_that_ends_a_work_loop_moves_half_an_interval() {
    let s = polled("test", POLL_THEN_TEST, 1.0);
    // 10 µs before the Irecv; the Test's join (0); 4 µs until the Test less the poll's 0.1 µs
    // (MPI time) less 2 µs; the 2 µs after it with the 25.9 µs to MPI_Finalize
    assert_eq!(calcs(&s.graph), vec![10_000, 0, 1_900, 27_900]);
    assert_eq!((s.stats.poll_shifts, s.stats.poll_shift_ns), (1, 2_000));
    assert!(s.stats.notes.iter().any(|n| n.starts_with("1 completions ended a work loop's polling: 0.002 ms")), "{:?}", s.stats.notes);
    let w = polled("wait", POLL_THEN_WAIT, 1.0);
    assert_eq!(calcs(&w.graph), vec![10_000, 0, 3_900, 25_900]);
    assert_eq!(w.stats.poll_shifts, 0);
}

/// ΔL = 0 reproduces the traced run when the message arrived at least h before the poll that
/// saw it. Rank 0's completion is at max(11.9 µs, arrival) + 2 µs against the unshifted (Wait)
/// graph's max(13.9 µs, arrival), the arrival at 1 µs + L: equal until the arrival passes
/// 11.9 µs, h = 2 µs later once it passes the traced poll (the mean of the real next poll).
#[test]
fn shifted_and_unshifted_agree_until_the_arrival_passes_end_minus_h() {
    let ls = [1_000.0, 10_900.0, 11_900.0, 12_900.0, 20_000.0];
    let t = runtime(polled("agree-test", POLL_THEN_TEST, 1.0).graph, &ls);
    let w = runtime(polled("agree-wait", POLL_THEN_WAIT, 1.0).graph, &ls);
    assert_eq!(w[0], 13_900 + 25_900, "the unshifted graph reproduces rank 0's traced run less its calls' time");
    let diff: Vec<i128> = t.iter().zip(&w).map(|(a, b)| a - b).collect();
    assert_eq!(diff, vec![0, 0, 1_000, 2_000, 2_000]);
}

/// Iprobe between chunks of work, then the blocking Recv of what the last probe found (HPL's
/// panel broadcast): not shifted, since moving computation from before the Recv would post it
/// early (a rendezvous sender would see that at ΔL = 0); nor a run of unsuccessful probes ended
/// by a blocking Recv (the rank gave up and blocked).
#[test]
fn a_receive_after_probes_is_not_shifted() {
    let probe = |t: f64| format!("MPI_Iprobe:{t:.3}:1:0:100,0,2:804:0:{:.3}\n", t + 0.1);
    let recv = "MPI_Recv:18.100:1:1:1,4,4:1:0:100,0,2:0:18.200\n";
    let found = format!("{}{}{}{recv}", probe(10.0), probe(14.0), probe(18.0));
    let s = traced("probe-found", &found, 1.0, 40.0);
    assert_eq!(s.stats.poll_shifts, 0);
    // the three probes' 0.3 µs are MPI time (waiting), the rest computation
    assert_eq!(calcs(&s.graph), vec![18_100 - 300, 21_800]);
    let folded = format!("MPI_Iprobe:10.000:1:0:100,0,2:804:0:18.100\n#@ polls n=3 busy=0.300\n{recv}");
    assert_eq!(traced("probe-folded", &folded, 1.0, 40.0).stats.poll_shifts, 0);
}

/// A loop ended by something other than a completion it polled for moves nothing: a blocking
/// MPI_Probe, an MPI_Isend (the loop stopped for its own reasons; the later Test then follows
/// no polls), and a first Test that already succeeds.
#[test]
fn other_ends_move_nothing() {
    let probe = "MPI_Test:10.000:800:804:0:10.100\n#@ done -\nMPI_Probe:14.000:1:0:100,0,2:0:14.100\nMPI_Wait:14.200:800:0:14.300\n#@ done 1\n";
    assert_eq!(polled("blocking-probe", probe, 1.0).stats.poll_shifts, 0);
    let isend = "MPI_Test:10.000:800:804:0:10.100\n#@ done -\nMPI_Isend:14.000:1:1:1,4,4:1:9:100,0,2:808:14.100\nMPI_Test:15.000:800:804:0:15.100\n#@ done 1\nMPI_Wait:16.000:808:0:16.100\n#@ done 3\n";
    let r1 = format!(
        "{}MPI_Send:1.000:1:1:1,4,4:0:0:100,1,2:1.100\nMPI_Recv:2.000:1:1:1,4,4:0:9:100,1,2:0:20.000\nMPI_Finalize:40.000:-\n#@ end finalize\n",
        head(1)
    );
    let r0 = format!("{}MPI_Irecv:10.000:1:1:1,4,4:1:0:100,0,2:800:10.000\n{isend}MPI_Finalize:40.000:-\n#@ end finalize\n", head(0));
    let dir = trace_dir("isend", &[r0, r1]);
    let s = schedule_path(dir.to_str().unwrap(), &ScheduleOptions::default(), &mut |_, _| {}).unwrap();
    assert_eq!(s.stats.poll_shifts, 0);
    let first = "MPI_Test:14.000:800:804:0:14.100\n#@ done 1\n";
    assert_eq!(polled("first-test", first, 1.0).stats.poll_shifts, 0);
}

/// MPI_Testall (and the other Test calls) ends a loop like MPI_Test; polls back to back
/// (a waiting loop: its interval is the poll's own time) move nothing; a coarse loop moves at
/// most 10 µs; HPCC's RandomAccess (a poll every ~80 ns) moves 40 ns per message.
#[test]
fn testall_waiting_coarse_and_fine_loops() {
    let testall = "MPI_Testall:10.000:1:800:804:0:10.100\n#@ done -\nMPI_Testall:14.000:1:800:804:0:14.100\n#@ done 1\n";
    assert_eq!(polled("testall", testall, 1.0).stats.poll_shift_ns, 2_000);

    let waiting = "MPI_Test:10.000:800:804:0:14.000\n#@ done -\n#@ polls n=40 busy=3.900\nMPI_Test:14.000:800:804:0:14.100\n#@ done 1\n";
    let s = polled("waiting", waiting, 1.0);
    assert_eq!((s.stats.poll_ns, s.stats.poll_shifts), (3_900, 0));

    let coarse = "MPI_Test:10.000:800:804:0:10.100\n#@ done -\nMPI_Test:35.000:800:804:0:35.100\n#@ done 1\n";
    assert_eq!(polled("coarse", coarse, 1.0).stats.poll_shift_ns, 10_000);

    // 1,700 polls in 136 µs, 100 µs of them inside the calls: a work loop (26 % outside)
    let fine = "MPI_Test:10.000:800:804:0:146.000\n#@ done -\n#@ polls n=1700 busy=100.000\nMPI_Test:146.000:800:804:0:146.100\n#@ done 1\n";
    let r0 = format!("{}MPI_Irecv:10.000:1:1:1,4,4:1:0:100,0,2:800:10.000\n{fine}MPI_Finalize:200.000:-\n#@ end finalize\n", head(0));
    let r1 = format!("{}MPI_Send:1.000:1:1:1,4,4:0:0:100,1,2:1.100\nMPI_Finalize:200.000:-\n#@ end finalize\n", head(1));
    let dir = trace_dir("fine", &[r0, r1]);
    let s = schedule_path(dir.to_str().unwrap(), &ScheduleOptions::default(), &mut |_, _| {}).unwrap();
    assert_eq!((s.stats.poll_work_ns, s.stats.poll_shift_ns), (100_000, 40));
}
