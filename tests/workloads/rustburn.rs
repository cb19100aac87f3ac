// rustburn: burn's known answer (tests/workloads/burn.c) from a Rust
// release build, the common case of mixed unwinding information: the
// standard library is built with frame pointers, the program's own code
// (rustc -C opt-level=3) is not, and both are linked into one object.
//
// One thread loops for -d seconds (or forever) calling func_a() once and
// func_b() RATIO times, each spinning a random number of iterations drawn
// the same way, so func_b is on-CPU RATIO times as often as func_a.  The
// calls go through three levels of functions that are never inlined and
// keep a frame of their own (no frame pointer), so a correct walk reads
// main;...;rustburn::run;rustburn::outer;rustburn::middle;rustburn::func_b.
//
//   rustburn [-d SECONDS] [-r RATIO]
//
// On exit it prints "rustburn: <calls_a> <calls_b>".

use std::hint::black_box;
use std::time::{Duration, Instant};

const SPIN: u64 = 100_000;

struct Counts {
    a: u64,
    b: u64,
    rng: u64,
}

// SPIN/2 .. 3*SPIN/2 iterations, SPIN on average (xorshift, as burn).
fn spin(c: &mut Counts) -> u64 {
    c.rng ^= c.rng << 13;
    c.rng ^= c.rng >> 7;
    c.rng ^= c.rng << 17;
    SPIN / 2 + c.rng % SPIN
}

// The same loop in both; the tags differ so that rustc does not merge
// two identical functions into one.
#[inline(never)]
fn func_a(n: u64) {
    let mut i = 0u64;
    while black_box(i) < n {
        i += 1;
    }
    black_box(b'a');
}

#[inline(never)]
fn func_b(n: u64) {
    let mut i = 0u64;
    while black_box(i) < n {
        i += 1;
    }
    black_box(b'b');
}

// One round: func_a once, func_b ratio times.
#[inline(never)]
fn middle(c: &mut Counts, ratio: u32) {
    func_a(spin(c));
    c.a += 1;
    for _ in 0..ratio {
        func_b(spin(c));
        c.b += 1;
    }
}

#[inline(never)]
fn outer(c: &mut Counts, ratio: u32) {
    for _ in 0..black_box(8) {
        middle(c, ratio);
    }
}

#[inline(never)]
fn run(c: &mut Counts, ratio: u32, secs: f64) {
    let t0 = Instant::now();
    while secs <= 0.0 || t0.elapsed() < Duration::from_secs_f64(secs) {
        outer(c, ratio);
    }
}

fn main() {
    let mut secs = 0.0f64;
    let mut ratio = 3u32;
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "-d" => secs = args[i + 1].parse().unwrap_or(0.0),
            "-r" => ratio = args[i + 1].parse().unwrap_or(3),
            _ => {
                eprintln!("usage: rustburn [-d seconds] [-r ratio]");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    let mut c = Counts { a: 0, b: 0, rng: 0x9e3779b97f4a7c15 };
    run(&mut c, ratio, secs);
    println!("rustburn: {} {}", c.a, c.b);
}
