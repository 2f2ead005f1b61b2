//! Before/after of the tokenizer in ONE process (scripts/bench-tokenizer-ab.sh builds it): the
//! worktree's tokenizer (`new`) and the one of a base commit (`old`) linked side by side, checked
//! to give the same ids and counts on the corpus, then timed in alternating rounds by thread CPU
//! time (less sensitive to other processes on a shared machine than wall time); medians printed.
//!   tokenizer-ab CORPUS.txt [ROUNDS]

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("corpus");
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(21);
    let mib = text.len() as f64 / 1048576.0;
    assert_eq!(new::encode(&text), old::encode(&text), "ids differ");
    assert_eq!(new::count(&text), old::count(&text), "counts differ");
    let mut times = [(); 4].map(|_| Vec::new());
    for _ in 0..rounds {
        let runs: [&dyn Fn(); 4] = [
            &|| {
                black_box(old::count(black_box(&text)));
            },
            &|| {
                black_box(new::count(black_box(&text)));
            },
            &|| {
                black_box(old::encode(black_box(&text)));
            },
            &|| {
                black_box(new::encode(black_box(&text)));
            },
        ];
        for (run, t) in runs.iter().zip(&mut times) {
            let start = thread_cpu_seconds();
            run();
            t.push(thread_cpu_seconds() - start);
        }
    }
    let [oc, nc, oe, ne] = times.map(median);
    println!(
        "tokenizer before/after, {} bytes, median of {rounds} alternating rounds (thread CPU): \
         count {:.1} -> {:.1} MiB/s ({:.2}x), encode {:.1} -> {:.1} MiB/s ({:.2}x)",
        text.len(),
        mib / oc,
        mib / nc,
        oc / nc,
        mib / oe,
        mib / ne,
        oe / ne
    );
}
