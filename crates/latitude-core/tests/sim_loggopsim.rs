//! `--loggopsim-compat`: LogGOPSim's rules and every quirk of
//! docs/reference/loggopsim.md, on hand-computed schedules (the event-by-event
//! derivations are in docs/simulator.md). Unless stated: L = 1000, o = 50, g = 0, G = 0,
//! O = 0, S = 65535 (integer ns, as LogGOPSim).

use latitude_core::goal::read_goal_from;
use latitude_core::graph::ExecGraph;
use latitude_core::model::{Model, Point};
use latitude_core::net::Flat;
use latitude_core::sim::{simulate, NoiseSpec, Semantics, SimGraph, SimOptions, SimResult};

fn goal(text: &str) -> ExecGraph {
    read_goal_from(text.as_bytes(), "test.goal").unwrap()
}

struct P {
    l: f64,
    o: f64,
    g: f64,
    gb: f64,
    ob: f64,
}

const BASE: P = P { l: 1000.0, o: 50.0, g: 0.0, gb: 0.0, ob: 0.0 };

fn run(g: &ExecGraph, p: P) -> SimResult {
    let sg = SimGraph::new(g).unwrap();
    let opts = SimOptions { semantics: Semantics::LogGopSim, model: Model { eager_limit: 65535, ..Model::default() }, ..Default::default() };
    let pt = Point::from_ns(&[p.l, p.o, p.g, p.gb, p.ob]).unwrap();
    simulate(g, &sg, &Flat, &pt, &opts, &NoiseSpec::default(), 0).unwrap()
}

fn ends(g: &ExecGraph, p: P) -> Vec<u64> {
    let r = run(g, p);
    assert_eq!(r.unit_ticks, 1_000_000_000, "LogGOPSim semantics counts integer ns");
    r.rank_end
}

const PINGPONG: &str = "num_ranks 2
rank 0 {
s: send 11b to 1
c: calc 100
c requires s
}
rank 1 {
r: recv 11b from 0
c: calc 100
c requires r
}";

/// Eager, receive pre-posted; G is charged on the receiver's CPU (quirk 1): the receive's
/// successor starts at ts + 2o + L + (s−1)G = 1120; the sender's CPU is free at o = 50.
#[test]
fn eager_preposted_charges_g_at_the_receiver() {
    assert_eq!(ends(&goal(PINGPONG), P { gb: 2.0, ..BASE }), vec![150, 1220]);
}

/// Eager, receive posted at 5000: the arrival (re-inserted until the CPU is free) pays o and
/// (s−1)G at 5000; the receive completes when posted; its successor at 5070.
#[test]
fn eager_late_receive_completes_when_posted() {
    let g = goal(
        "num_ranks 2
rank 0 {
s: send 11b to 1
c: calc 100
c requires s
}
rank 1 {
x: calc 5000
r: recv 11b from 0
c: calc 100
r requires x
c requires r
}",
    );
    assert_eq!(ends(&g, P { gb: 2.0, ..BASE }), vec![150, 5170]);
}

/// Rendezvous (s > S), pre-posted: no handshake (quirk 5); the sender completes at the
/// match, ts + o + L = 1050, its CPU raised to 1050.
#[test]
fn rendezvous_preposted_completes_at_the_match() {
    let g = goal(&PINGPONG.replace("11b", "100000b"));
    assert_eq!(ends(&g, BASE), vec![1150, 1200]);
}

/// Rendezvous, receive posted at 5000: the send completes then.
#[test]
fn rendezvous_late_receive_releases_the_sender() {
    let g = goal(
        "num_ranks 2
rank 0 {
s: send 100000b to 1
c: calc 100
c requires s
}
rank 1 {
x: calc 5000
r: recv 100000b from 0
c: calc 100
r requires x
c requires r
}",
    );
    assert_eq!(ends(&g, BASE), vec![5100, 5150]);
}

/// Quirk 2: dependencies carry no time across CPUs. b (CPU 1) requires a (CPU 0) but is
/// inserted at CPU 1's free time, 0: rank 0 ends at max(1000, 300), not 1300. A send that
/// requires an eager send on another CPU does not wait for its o either.
#[test]
fn dependencies_across_cpus_carry_no_time() {
    let g = goal(
        "num_ranks 1
rank 0 {
a: calc 1000 cpu 0
b: calc 300 cpu 1
b requires a
}",
    );
    assert_eq!(ends(&g, BASE), vec![1000]);
    let g = goal(
        "num_ranks 2
rank 0 {
s1: send 8b to 1 tag 0 cpu 0
s2: send 8b to 1 tag 1 cpu 1
s2 requires s1
}
rank 1 {
recv 8b from 0 tag 0
recv 8b from 0 tag 1
}",
    );
    // both sends at 0; on rank 1 each arrival is processed on the send's CPU index
    assert_eq!(ends(&g, BASE), vec![50, 1100]);
}

/// Quirk 3: (s − 1) wraps for s = 0. Sender: nexto = o, nextgs = −G (mod 2⁶⁴); receiver:
/// nexto = t + o − G. A second send then waits until 2⁶⁴ − 5 and wraps around.
#[test]
fn zero_byte_messages_wrap() {
    let one = goal(
        "num_ranks 2
rank 0 {
send 0b to 1
}
rank 1 {
recv 0b from 0
}",
    );
    assert_eq!(ends(&one, P { gb: 5.0, ..BASE }), vec![50, 1095]);
    assert_eq!(ends(&one, P { gb: 5.0, ob: 3.0, ..BASE }), vec![47, 1097]);
    let two = goal(
        "num_ranks 2
rank 0 {
a: send 0b to 1 tag 0
b: send 8b to 1 tag 1
b requires a
}
rank 1 {
recv 0b from 0 tag 0
recv 8b from 0 tag 1
}",
    );
    // b issued at 2⁶⁴−5: nexto = 2⁶⁴−5+50 = 45, its message arrives at 1045 (wrapped) and
    // is processed at 1095 (the CPU is busy): 1095 + 50 + 7·5 = 1180.
    assert_eq!(ends(&two, P { gb: 5.0, ..BASE }), vec![45, 1180]);
}

/// Quirk 4: the arrival is processed on the receiver's CPU with the *send's* index.
/// The message (send on CPU 1) waits for rank 1's CPU 1 (busy until 2000) although the
/// receive is on CPU 0; the receive's successor on CPU 0 then starts at CPU 0's time, 0.
#[test]
fn arrivals_use_the_send_cpu_index() {
    let g = goal(
        "num_ranks 2
rank 0 {
send 8b to 1 cpu 1
}
rank 1 {
r: recv 8b from 0 cpu 0
d: calc 100 cpu 0
x: calc 2000 cpu 1
d requires r
}",
    );
    assert_eq!(ends(&g, BASE), vec![50, 2050]);
}

/// Quirk 4b: a receive that finds a rendezvous message in the UQ raises the sender's clocks
/// at the *receive's* cpu/nic indices: rank 0's CPU 1 goes to 5000, so its calc on CPU 1
/// ends at 5010 (with the send's index it would end at 10).
#[test]
fn late_rendezvous_receive_raises_the_sender_at_its_own_cpu_index() {
    let g = goal(
        "num_ranks 2
rank 0 {
s: send 100000b to 1 cpu 0
c: calc 10 cpu 1
c requires s
}
rank 1 {
x: calc 5000 cpu 1
r: recv 100000b from 0 cpu 1
r requires x
}",
    );
    assert_eq!(ends(&g, BASE), vec![5010, 5000]);
}

/// FIFO tie-breaking by sequence number, kept on re-insertion: the arrival (created first,
/// re-inserted at 5000) is processed before calc B (inserted later for 5000), so the
/// rendezvous matches at 5000 and rank 0 ends at 5010 (with fresh numbers: 5110).
#[test]
fn reinserted_events_keep_their_sequence_number() {
    let g = goal(
        "num_ranks 2
rank 0 {
s: send 100000b to 1
c: calc 10
c requires s
}
rank 1 {
r: recv 100000b from 0
x: calc 5000
b: calc 100
b requires x
}",
    );
    assert_eq!(ends(&g, BASE), vec![5010, 5150]);
}

/// A rank's end is the max over its CPUs of nexto; NIC times are not included.
#[test]
fn end_time_ignores_the_nic() {
    let g = goal("num_ranks 2\nrank 0 {\nsend 1001b to 1\n}\nrank 1 {\nrecv 1001b from 0\n}");
    // sender: nexto = 50, nextgs = 10000; receiver: 1050 + 50 + 1000·10
    assert_eq!(ends(&g, P { gb: 10.0, ..BASE }), vec![50, 11100]);
}

/// Like LogGOPSim, times are reported when the queues are empty even if operations never
/// ran: a rendezvous message taken by a receive declared eager never completes its send.
#[test]
fn unfinished_operations_are_counted_not_fatal() {
    let g = goal(
        "num_ranks 2
rank 0 {
s: send 100000b to 1
c: calc 10
c requires s
}
rank 1 {
x: calc 5000
r: recv 8b from 0
r requires x
}",
    );
    let r = run(&g, BASE);
    assert_eq!(r.rank_end, vec![50, 5050]);
    assert_eq!(r.unfinished, 2);
}

/// Wildcards: first match in queue order; ANY_SOURCE takes whichever message arrived first.
/// Non-empty queues at the end are an error (LogGOPSim prints no times).
#[test]
fn wildcards_match_in_queue_order() {
    let g = goal(
        "num_ranks 3
rank 0 {
a: recv 8b from -1 tag -1
b: calc 1
c: recv 8b from 2 tag -1
b requires a
c requires b
}
rank 1 {
x: calc 3000
s: send 8b to 0 tag 7
s requires x
}
rank 2 {
send 8b to 0 tag 9
}",
    );
    // rank 2's message (1050) matches a; rank 1's (4050) arrives when only c (from 2) is
    // posted: unexpected forever
    let sg = SimGraph::new(&g).unwrap();
    let opts = SimOptions { semantics: Semantics::LogGopSim, ..Default::default() };
    let pt = Point::from_ns(&[1000.0, 50.0, 0.0, 0.0, 0.0]).unwrap();
    let err = simulate(&g, &sg, &Flat, &pt, &opts, &NoiseSpec::default(), 0).unwrap_err();
    assert!(err.message.contains("rank 0 recv #2"), "{err}");
    assert!(err.message.contains("1 receives never matched, 1 messages never received"), "{err}");
}

#[test]
fn non_integer_parameters_are_rejected() {
    let g = goal(PINGPONG);
    let sg = SimGraph::new(&g).unwrap();
    let opts = SimOptions { semantics: Semantics::LogGopSim, ..Default::default() };
    let pt = Point::from_ns(&[1000.0, 50.0, 0.0, 0.018, 0.0]).unwrap();
    let err = simulate(&g, &sg, &Flat, &pt, &opts, &NoiseSpec::default(), 0).unwrap_err();
    assert_eq!(err.location, "-G");
    assert!(err.message.contains("integer ns"), "{err}");
}

/// Nodes released together (and roots) are inserted SEND < RECV < CALC, then by offset:
/// the send is issued before the calc that precedes it in the file, so its message leaves
/// at 100 + o + L = 1150 (calc first: 1200). Likewise for roots at time 0.
#[test]
fn released_sends_go_before_calcs() {
    let g = goal(
        "num_ranks 2
rank 0 {
c0: calc 100
x: calc 50
s: send 8b to 1
x requires c0
s requires c0
}
rank 1 {
recv 8b from 0
}",
    );
    assert_eq!(ends(&g, BASE), vec![200, 1200]);
    let roots = goal("num_ranks 2\nrank 0 {\ncalc 100\nsend 8b to 1\n}\nrank 1 {\nrecv 8b from 0\n}");
    assert_eq!(ends(&roots, BASE), vec![150, 1100]);
}
