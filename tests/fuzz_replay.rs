//! The fuzz harnesses (fuzz/harness.rs), run deterministically and bounded
//! in time by cargo test: over the committed seed corpus, and over seeded
//! random inputs and mutations of it. The coverage-guided runs use the same
//! harnesses through cargo fuzz (see docs/robustness.md).

#[path = "../fuzz/harness.rs"]
mod harness;

// The harness brings the shared test data helpers (tests/common/data.rs).
use harness::data::Rng;

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = format!("{}/fuzz/seeds/{target}", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn replay(target: &str, run: fn(&[u8]), iterations: u64) {
    let seeds = corpus(target);
    assert!(!seeds.is_empty());
    for s in &seeds {
        run(s);
    }
    let mut rng = Rng::new(0xF022 ^ target.len() as u64);
    for _ in 0..iterations {
        let mut input = if rng.below(4) == 0 {
            (0..rng.below(512)).map(|_| rng.next() as u8).collect()
        } else {
            seeds[rng.below(seeds.len() as u64) as usize].clone()
        };
        for _ in 0..rng.below(8) {
            if input.is_empty() {
                break;
            }
            let k = rng.below(input.len() as u64) as usize;
            match rng.below(4) {
                0 => input[k] = rng.next() as u8,
                1 => input[k] ^= 1 << rng.below(8),
                2 => input.truncate(k),
                _ => input.insert(k, rng.next() as u8),
            }
        }
        run(&input);
    }
}

#[test]
fn replay_create() {
    replay("create", harness::create, 20_000);
}

#[test]
fn replay_descriptor() {
    replay("descriptor", harness::descriptor, 20_000);
}

#[test]
fn replay_lookup() {
    replay("lookup", harness::lookup, 3_000);
}

#[test]
fn replay_assemble() {
    replay("assemble", harness::assemble, 20_000);
}

#[test]
fn replay_text() {
    replay("text", harness::text, 20_000);
}

#[test]
fn replay_file() {
    replay("file", harness::file, 3_000);
}
