//! Before/after of the tokenizer (scripts/bench-tokenizer-ab.sh builds it): the worktree's tokenizer
//! (`new`) and the one of a base commit (`old`) linked side by side, checked to give the same ids and
//! counts on the corpus, then timed in alternating rounds, each round one fresh process per side
//! that runs 3 passes of count and 3 of encode and reports its fastest by thread CPU time (less
//! sensitive to other processes on a shared machine than wall time); medians printed.
//! Separate processes because both sides keep per-thread caches: timed in one process, each side's
//! pass found its caches pushed out of L2/L3 by the other side's pass before it, which skews any
//! change of cache size (on the corpus's pieces of 17-96 bytes, 3eb0d7f measured 28.5 MiB/s beside
//! a tokenizer with 768 KiB more cache and 50.6 MiB/s on its own).
//!   tokenizer-ab CORPUS.txt [ROUNDS]
//!   tokenizer-ab --one old|new CORPUS.txt   (one side's fastest count and encode, in seconds)

use std::hint::black_box;

fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// Fastest of 3 passes of count, then of encode, of the tokenizer `side` on `text` (seconds).
fn one_side(side: &str, text: &str) -> (f64, f64) {
    let best = |f: &dyn Fn()| {
        (0..3)
            .map(|_| {
                let start = thread_cpu_seconds();
                f();
                thread_cpu_seconds() - start
            })
            .fold(f64::MAX, f64::min)
    };
    match side {
        "old" => (
            best(&|| {
                black_box(old::count(black_box(text)));
            }),
            best(&|| {
                black_box(old::encode(black_box(text)));
            }),
        ),
        _ => (
            best(&|| {
                black_box(new::count(black_box(text)));
            }),
            best(&|| {
                black_box(new::encode(black_box(text)));
            }),
        ),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args[1] == "--one" {
        let text = std::fs::read_to_string(&args[3]).expect("corpus");
        let (count, encode) = one_side(&args[2], &text);
        println!("{count} {encode}");
        return;
    }
    let text = std::fs::read_to_string(&args[1]).expect("corpus");
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(21);
    let mib = text.len() as f64 / 1048576.0;
    assert_eq!(new::encode(&text), old::encode(&text), "ids differ");
    assert_eq!(new::count(&text), old::count(&text), "counts differ");
    let me = std::env::current_exe().expect("own path");
    let mut times = [(); 4].map(|_| Vec::new());
    for _ in 0..rounds {
        for (side, at) in [("old", 0), ("new", 1)] {
            let run = std::process::Command::new(&me)
                .args(["--one", side, &args[1]])
                .output()
                .expect("one side");
            let line = String::from_utf8(run.stdout).expect("utf-8");
            let mut secs = line
                .split_whitespace()
                .map(|s| s.parse::<f64>().expect("secs"));
            times[at].push(secs.next().expect("count"));
            times[at + 2].push(secs.next().expect("encode"));
        }
    }
    let [oc, nc, oe, ne] = times.map(median);
    println!(
        "tokenizer before/after, {} bytes, median of {rounds} alternating rounds (separate processes, \
         fastest of 3 passes, thread CPU): count {:.1} -> {:.1} MiB/s ({:.2}x), encode {:.1} -> \
         {:.1} MiB/s ({:.2}x)",
        text.len(),
        mib / oc,
        mib / nc,
        oc / nc,
        mib / oe,
        mib / ne,
        oe / ne
    );
}
