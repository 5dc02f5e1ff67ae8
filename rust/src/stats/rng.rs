//! `gpuopt.rng/v1`: the one named, pinned random-number generator behind every resample, schedule and
//! simulation. Bit-reproducible on any machine and any thread count, because every unit of work (one
//! bootstrap replicate, one schedule, one simulated data set) owns its own stream, keyed by what it is
//! rather than by where or when it runs.
//!
//! - **Stream key**: the first 8 bytes (big-endian) of SHA-256 of `"gpuopt.rng/v1\0" + tag`, followed,
//!   for each part, by `"\0"` and the part's canonical JSON (RFC 8785: an integer in decimal, a string
//!   JSON-quoted). Integer parts must be at most 2^53 − 1 so that JSON carries them exactly.
//! - **Generator**: the key seeds SplitMix64, whose first four outputs are the state of xoshiro256++.
//! - **Integers in [0, n)**: Lemire's multiply-shift on one 64-bit output, with rejection (unbiased).
//! - **Unit reals in (0, 1)**: `((x >> 11) + 0.5) / 2^53`; normals by the inverse normal CDF of one unit
//!   real; exponentials by `−ln u`.

use sha2::{Digest, Sha256};

/// The generator's name, recorded in every statistics output.
pub const RNG_NAME: &str = "gpuopt.rng/v1";

/// The largest integer part (and seed) a stream key accepts: JSON numbers are exact up to here.
pub const MAX_EXACT_INT: u64 = (1 << 53) - 1;

/// One part of a stream key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    Int(u64),
    Str(&'a str),
}

impl Part<'_> {
    fn canonical_json(&self) -> String {
        match self {
            Part::Int(v) => v.to_string(),
            // serde_json escapes exactly as RFC 8785 does: `"`, `\`, and control characters (short forms
            // \b \t \n \f \r, else \u00xx in lower case); everything else is literal UTF-8.
            Part::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        }
    }
}

/// A hashed key prefix (tag and leading parts) from which many keys differing in a last integer part
/// are derived cheaply: one replicate's key costs one SHA-256 block, not a whole message.
#[derive(Clone)]
pub struct KeyPrefix {
    hasher: Sha256,
}

impl KeyPrefix {
    pub fn new(tag: &str, parts: &[Part<'_>]) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(RNG_NAME.as_bytes());
        hasher.update([0u8]);
        hasher.update(tag.as_bytes());
        let mut prefix = Self { hasher };
        for part in parts {
            prefix.push(*part);
        }
        prefix
    }

    /// Appends one more part.
    pub fn push(&mut self, part: Part<'_>) {
        self.hasher.update([0u8]);
        self.hasher.update(part.canonical_json().as_bytes());
    }

    /// The key of exactly these parts.
    pub fn key(&self) -> u64 {
        first_u64(self.hasher.clone().finalize().as_slice())
    }

    /// The key of these parts followed by the integer `index` (a replicate or simulation number).
    pub fn key_with(&self, index: u64) -> u64 {
        let mut hasher = self.hasher.clone();
        hasher.update([0u8]);
        hasher.update(index.to_string().as_bytes());
        first_u64(hasher.finalize().as_slice())
    }
}

fn first_u64(digest: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    for (dst, src) in bytes.iter_mut().zip(digest) {
        *dst = *src;
    }
    u64::from_be_bytes(bytes)
}

/// The stream key of `tag` and `parts`.
pub fn stream_key(tag: &str, parts: &[Part<'_>]) -> u64 {
    KeyPrefix::new(tag, parts).key()
}

/// The 53-bit seed a workload driver receives for one call: key(`"input"`, plan seed, pair, case) >> 11,
/// exact as a JSON number.
pub fn input_seed(plan_seed: u64, pair_index: u64, case_id: &str) -> u64 {
    stream_key(
        "input",
        &[
            Part::Int(plan_seed),
            Part::Int(pair_index),
            Part::Str(case_id),
        ],
    ) >> 11
}

/// SplitMix64 (Steele, Lea and Flood 2014), used only to expand a key into a xoshiro state.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// One random stream: xoshiro256++ (Blackman and Vigna 2019) seeded from a stream key.
#[derive(Debug, Clone)]
pub struct Stream {
    s: [u64; 4],
}

impl Stream {
    /// The stream of a key.
    pub fn from_key(key: u64) -> Self {
        let mut seeder = SplitMix64::new(key);
        let s = [
            seeder.next_u64(),
            seeder.next_u64(),
            seeder.next_u64(),
            seeder.next_u64(),
        ];
        Self { s }
    }

    /// The stream of `tag` and `parts`.
    pub fn new(tag: &str, parts: &[Part<'_>]) -> Self {
        Self::from_key(stream_key(tag, parts))
    }

    /// The xoshiro256++ state (s0, s1, s2, s3).
    pub fn state(&self) -> [u64; 4] {
        self.s
    }

    /// A xoshiro256++ generator with this exact state (for reference test vectors).
    pub fn from_state(s: [u64; 4]) -> Self {
        Self { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = self.s;
        let result = s0.wrapping_add(s3).rotate_left(23).wrapping_add(s0);
        let t = s1 << 17;
        let mut n = [s0, s1, s2 ^ s0, s3 ^ s1];
        n[1] ^= n[2];
        n[0] ^= n[3];
        n[2] ^= t;
        n[3] = n[3].rotate_left(45);
        self.s = n;
        result
    }

    /// A uniform integer in `[0, n)` (Lemire's multiply-shift with rejection); 0 when `n` is 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// A uniform real in the open interval (0, 1), on the grid of 2^53 midpoints.
    #[inline]
    pub fn unit_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal deviate (inverse CDF of one unit real).
    pub fn normal(&mut self) -> f64 {
        super::normal::inverse_cdf(self.unit_open())
    }

    /// A standard exponential deviate.
    pub fn exponential(&mut self) -> f64 {
        -libm::log(self.unit_open())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // Reference outputs of Vigna's splitmix64.c for seed 1234567.
        let mut g = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..5).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            vec![
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    #[test]
    fn xoshiro256plusplus_matches_the_reference_sequence() {
        // Reference outputs of Vigna's xoshiro256plusplus.c from the state {1, 2, 3, 4}.
        let mut g = Stream::from_state([1, 2, 3, 4]);
        let got: Vec<u64> = (0..6).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            vec![
                41_943_041,
                58_720_359,
                3_588_806_011_781_223,
                3_591_011_842_654_386,
                9_228_616_714_210_784_205,
                9_973_669_472_204_895_162,
            ]
        );
    }

    #[test]
    fn key_is_the_big_endian_prefix_of_the_sha256_of_the_framed_parts() {
        let mut h = Sha256::new();
        h.update(b"gpuopt.rng/v1\0bootstrap\x007\0\"abc\"\0\"lat\\\"x\"\x0012");
        let want = first_u64(h.finalize().as_slice());
        let parts = [
            Part::Int(7),
            Part::Str("abc"),
            Part::Str("lat\"x"),
            Part::Int(12),
        ];
        assert_eq!(stream_key("bootstrap", &parts), want);
        let prefix = KeyPrefix::new("bootstrap", parts.get(..3).unwrap());
        assert_eq!(prefix.key_with(12), want);
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut g = Stream::new("test", &[Part::Int(1)]);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let v = g.below(7) as usize;
            seen[v] += 1;
        }
        assert!(seen.iter().all(|&c| c > 850 && c < 1150), "{seen:?}");
        assert_eq!(g.below(1), 0);
        assert_eq!(g.below(0), 0);
    }

    #[test]
    fn unit_open_never_touches_the_ends() {
        let mut g = Stream::from_state([0, 0, 0, 1]);
        for _ in 0..1000 {
            let u = g.unit_open();
            assert!(u > 0.0 && u < 1.0);
        }
    }

    #[test]
    fn input_seed_fits_in_53_bits() {
        let s = input_seed(42, 3, "case-a");
        assert!(s <= MAX_EXACT_INT);
        assert_eq!(
            s,
            stream_key("input", &[Part::Int(42), Part::Int(3), Part::Str("case-a")]) >> 11
        );
    }
}
