//! JSON strings: where one ends and whether it holds escapes, a word or a SIMD block at a time
//! (16-, 32- or 64-byte lanes chosen at run time through `pulp`'s safe tokens).

use super::*;

/// Length of a JSON escape by the byte after its backslash: 2, 6 for `\\u`, 0 when invalid.
pub(super) const ESCAPE_LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let simple = *b"\"\\/bfnrt";
    let mut k = 0;
    while k < simple.len() {
        t[simple[k] as usize] = 2;
        k += 1;
    }
    t[b'u' as usize] = 6;
    t
};

/// The usual escape letters (`"`, `t`, `n`) at the index of their low four bits, for a lookup that
/// finds all three with one compare: a byte is one exactly when it equals its entry (0xFF matches
/// no byte below 0x80, and the lookup gives 0 for the others).
pub(super) const USUAL_BY_LOW_BITS: [u8; 16] = {
    let mut t = [0xFFu8; 16];
    t[(b'"' & 15) as usize] = b'"';
    t[(b't' & 15) as usize] = b't';
    t[(b'n' & 15) as usize] = b'n';
    t
};

pub(super) const LO: u64 = 0x0101_0101_0101_0101;
pub(super) const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in the lowest byte of `w` equal to `c` (and possibly in bytes above it).
#[inline(always)]
pub(crate) fn eq_byte(w: u64, c: u8) -> u64 {
    let v = w ^ (LO * u64::from(c));
    v.wrapping_sub(LO) & !v & HI
}

/// High bit set in each byte of `w` that is `"`, `\\` or below 0x20. Only the lowest flagged
/// byte is exact (a borrow can flag a byte above it), which is all the scan uses.
#[inline(always)]
pub(crate) fn specials(w: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(LO) & !v;
    (zero(w ^ (LO * u64::from(b'"'))) | zero(w ^ (LO * u64::from(b'\\'))) | w.wrapping_sub(LO * 0x20) & !w) & HI
}

/// Scans a string starting at its opening quote; returns the position after the closing quote
/// and whether it holds escapes. A string that closes within its first sixteen bytes, without
/// escapes (most keys, ids and names), is read here inline; any other goes to [`string_long`].
#[inline(always)]
pub(crate) fn string(b: &[u8], open: usize) -> Result<(usize, bool), ScanError> {
    if let Some(chunk) = b.get(open + 1..open + 17) {
        let (quote, stops) = stops16(chunk.try_into().unwrap_or([0; 16]));
        // The first quote, backslash or control byte is a quote: the string ends there.
        if stops & stops.wrapping_neg() & quote != 0 {
            return Ok((open + 2 + stops.trailing_zeros() as usize, false));
        }
    }
    string_long::<false>(b, open)
}

/// [`string`] for a string that must be as `JSON.stringify` prints it: its escapes are only the
/// ones it prints (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00xx` in lowercase for the
/// other control characters); any other (`\/`, `\u00e9`, `\u001B`) is an error. Returns the
/// position after the closing quote.
#[inline(always)]
pub(crate) fn printed_string(b: &[u8], open: usize) -> Result<usize, ScanError> {
    if let Some(chunk) = b.get(open + 1..open + 17) {
        let (quote, stops) = stops16(chunk.try_into().unwrap_or([0; 16]));
        if stops & stops.wrapping_neg() & quote != 0 {
            return Ok(open + 2 + stops.trailing_zeros() as usize);
        }
    }
    string_long::<true>(b, open).map(|(end, _)| end)
}

/// Whether the escape whose backslash is at `at` is one `JSON.stringify` prints (see
/// [`printed_string`]); the escape is known to be well-formed.
#[inline(always)]
fn printed_escape(b: &[u8], at: usize) -> bool {
    match b.get(at + 1) {
        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => true,
        Some(b'u') => b.get(at + 2..at + 6).is_some_and(|hex| {
            let digit = |h: u8| matches!(h, b'0'..=b'9' | b'a'..=b'f');
            let code = |h: u8| if h <= b'9' { h - b'0' } else { h - b'a' + 10 };
            hex[0] == b'0'
                && hex[1] == b'0'
                && digit(hex[2])
                && digit(hex[3])
                && hex[2] <= b'1'
                && !matches!(code(hex[2]) * 16 + code(hex[3]), 0x08 | 0x09 | 0x0a | 0x0c | 0x0d)
        }),
        _ => false,
    }
}

/// One bit per byte of 16: the quotes, and the bytes that stop a string's run (quotes,
/// backslashes and bytes below 0x20).
#[inline(always)]
pub(super) fn stops16(chunk: [u8; 16]) -> (u32, u32) {
    use wide::u8x16;
    let v = u8x16::new(chunk);
    let quote = v.simd_eq(u8x16::splat(b'"')).to_bitmask();
    (quote, quote | (v.simd_eq(u8x16::splat(b'\\')) | v.min(u8x16::splat(0x1f)).simd_eq(v)).to_bitmask())
}

/// The rest of [`string`], with the widest lanes the CPU has: 64 bytes at a time
/// ([`string_blocks_with`]) up to the closing quote, then the byte-by-byte loop at the stop (or
/// over the last bytes of the input). One call from the scan: the lanes' CPU features are
/// enabled for the whole of it, so nothing inside is a call.
#[inline(never)]
pub(super) fn string_long<const PRINTED: bool>(b: &[u8], open: usize) -> Result<(usize, bool), ScanError> {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        return simd.vectorize(LongString::<_, PRINTED> { lanes: Lanes64(simd), b, open });
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        return simd.vectorize(LongString::<_, PRINTED> { lanes: Lanes32(simd), b, open });
    }
    string_long_with::<PRINTED>(Lanes16, b, open)
}

/// [`string_long_with`] as the call `vectorize` makes with the lanes' CPU features. Its body is
/// always inlined there; a closure's is only while it stays small (a larger string loop in a
/// closure is left out of line, its intrinsics become calls, and the pass takes 224 instead of
/// 33 ms).
pub(super) struct LongString<'b, L, const PRINTED: bool> {
    pub(super) lanes: L,
    pub(super) b: &'b [u8],
    pub(super) open: usize,
}

impl<L: BlockMasks, const PRINTED: bool> pulp::NullaryFnOnce for LongString<'_, L, PRINTED> {
    type Output = Result<(usize, bool), ScanError>;
    #[inline(always)]
    fn call(self) -> Self::Output {
        string_long_with::<PRINTED>(self.lanes, self.b, self.open)
    }
}

/// [`string_long`] with the given lanes; inlined, so that it is built for the lanes' CPU features.
/// `PRINTED`: only the escapes `JSON.stringify` prints are accepted ([`printed_string`]).
#[inline(always)]
pub(super) fn string_long_with<const PRINTED: bool>(
    lanes: impl BlockMasks,
    b: &[u8],
    open: usize,
) -> Result<(usize, bool), ScanError> {
    // Strings of up to 32 bytes without escapes close in these two lanes.
    if let Some(chunk) = b.get(open + 1..open + 33) {
        let (q0, s0) = stops16(chunk[..16].try_into().unwrap_or([0; 16]));
        let (q1, s1) = stops16(chunk[16..].try_into().unwrap_or([0; 16]));
        let (quote, stops) = (u64::from(q1) << 16 | u64::from(q0), u64::from(s1) << 16 | u64::from(s0));
        if stops & stops.wrapping_neg() & quote != 0 {
            return Ok((open + 2 + stops.trailing_zeros() as usize, false));
        }
    }
    let mut escaped = false;
    let mut i = string_blocks_with::<PRINTED>(lanes, b, open + 1, &mut escaped);
    loop {
        // Only near the end of the input: sixteen bytes at a time, then byte by byte.
        while let Some(chunk) = b.get(i..i + 16) {
            let (_, m) = stops16(chunk.try_into().unwrap_or([0; 16]));
            if m != 0 {
                i += m.trailing_zeros() as usize;
                break;
            }
            i += 16;
        }
        let Some(&c) = b.get(i) else {
            return Err(ScanError { offset: open, reason: "unterminated string" });
        };
        match c {
            b'"' => return Ok((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                let next = b.get(i + 1).copied().unwrap_or(0);
                let len = match ESCAPE_LEN[usize::from(next)] {
                    2 => 2,
                    6 if b.get(i + 2..i + 6).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) => 6,
                    6 => return Err(ScanError { offset: i, reason: "invalid unicode escape" }),
                    _ => return Err(ScanError { offset: i, reason: "invalid escape" }),
                };
                if PRINTED && !printed_escape(b, i) {
                    return Err(ScanError { offset: i, reason: "an escape JSON.stringify does not print" });
                }
                i += len;
            }
            0..=0x1f => return Err(ScanError { offset: i, reason: "control character in string" }),
            _ => i += 1,
        }
    }
}

/// How [`string_blocks_with`] finds, in a 64-byte block, one bit per byte for: quotes and bytes below
/// 0x20 (the bytes that end a string's run, unless escaped), backslashes, and the usual escape
/// letters `n`, `"` and `t`.
pub(super) trait BlockMasks: Copy {
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64);

    /// Of the escaped bytes `letters` of `block` (at `i` in `b`), those whose escape is not
    /// well-formed: a letter JSON does not know, or `u` without four hex digits after it. Byte by
    /// byte here; lanes with a byte shuffle classify the whole block at once.
    #[inline(always)]
    fn odd_escapes(self, b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
        odd_escapes_by_byte(b, i, block, letters)
    }
}

/// [`BlockMasks::odd_escapes`] one escaped byte at a time.
#[inline(always)]
pub(super) fn odd_escapes_by_byte(b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
    let mut odd = 0u64;
    let mut unchecked = letters;
    while unchecked != 0 {
        let p = unchecked.trailing_zeros() as usize;
        let well_formed = match ESCAPE_LEN[usize::from(block[p])] {
            2 => true,
            6 => b.get(i + p + 1..i + p + 5).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
            _ => false,
        };
        if !well_formed {
            odd |= unchecked & unchecked.wrapping_neg();
        }
        unchecked &= unchecked - 1;
    }
    odd
}

/// The escape classes of a byte, as bits: [`ESCAPE_LETTER`], [`HEX_DIGIT`] and [`LETTER_U`]. A
/// byte's classes are those its low-nibble entry and its high-nibble entry share (the way simdjson
/// classifies bytes), so two 16-byte lookups classify every byte.
pub(super) const ESCAPE_LETTER: u8 = 0x0F;
pub(super) const HEX_DIGIT: u8 = 0x70;
pub(super) const LETTER_U: u8 = 0x80;
/// Class bits by high nibble: `"` and `/` (0x2_), `\` (0x5_), `b f n` (0x6_), `r t u` (0x7_);
/// digits (0x3_), `A-F` (0x4_), `a-f` (0x6_); `u`.
pub(super) const CLASS_BY_HIGH_NIBBLE: [u8; 16] = {
    let mut t = [0u8; 16];
    t[0x2] = 0x01;
    t[0x3] = 0x10;
    t[0x4] = 0x20;
    t[0x5] = 0x02;
    t[0x6] = 0x04 | 0x40;
    t[0x7] = 0x08 | LETTER_U;
    t
};
pub(super) const CLASS_BY_LOW_NIBBLE: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut lo = 0;
    while lo < 16 {
        // Digits 0-9; letters A-F and a-f have low nibbles 1-6.
        if lo <= 9 {
            t[lo] |= 0x10;
        }
        if lo >= 1 && lo <= 6 {
            t[lo] |= 0x20 | 0x40;
        }
        lo += 1;
    }
    t[0x2] |= 0x01 | 0x04 | 0x08; // " b r
    t[0xF] |= 0x01; // /
    t[0xC] |= 0x02; // \
    t[0x6] |= 0x04; // f
    t[0xE] |= 0x04; // n
    t[0x4] |= 0x08; // t
    t[0x5] |= 0x08 | LETTER_U; // u
    t
};

/// [`BlockMasks::odd_escapes`] from the class masks of the block: each `u` is checked against the
/// four bytes after it by shifts; a `u` among the block's last four bytes, whose digits lie in
/// the next block, is checked byte by byte.
#[inline(always)]
pub(super) fn odd_escapes_by_class(
    b: &[u8],
    i: usize,
    block: &[u8; 64],
    letters: u64,
    classes: (u64, u64, u64),
) -> u64 {
    const LAST_FOUR: u64 = 0xF << 60;
    let (letter, hex, u) = classes;
    let u = letters & u;
    let odd_u = u & !((hex >> 1) & (hex >> 2) & (hex >> 3) & (hex >> 4));
    let mut odd = (letters & !letter) | (odd_u & !LAST_FOUR);
    if odd_u & LAST_FOUR != 0 {
        odd |= odd_escapes_by_byte(b, i, block, odd_u & LAST_FOUR);
    }
    odd
}

/// 16-byte lanes: SSE2 on x86-64, NEON on AArch64, whatever `wide` has elsewhere.
#[derive(Clone, Copy)]
pub(super) struct Lanes16;

impl BlockMasks for Lanes16 {
    #[inline(always)]
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64) {
        use wide::u8x16;
        let (mut quote_or_control, mut backslash, mut usual) = (0u64, 0u64, 0u64);
        for k in 0..4 {
            let mut lanes = [0u8; 16];
            lanes.copy_from_slice(&block[k * 16..k * 16 + 16]);
            let v = u8x16::new(lanes);
            let shift = k * 16;
            let is = |c: u8| v.simd_eq(u8x16::splat(c));
            let stops = is(b'"') | v.min(u8x16::splat(0x1f)).simd_eq(v);
            quote_or_control |= u64::from(stops.to_bitmask()) << shift;
            backslash |= u64::from(is(b'\\').to_bitmask()) << shift;
            usual |= u64::from((is(b'n') | is(b'"') | is(b't')).to_bitmask()) << shift;
        }
        (quote_or_control, backslash, usual)
    }
}

/// 32-byte AVX2 lanes, for x86-64 CPUs that have AVX2. The CPU is asked at run time (`pulp`), so
/// the build stays portable. Scanning 300 MB of the bench store's lines once each, from cache,
/// took 60 ms with 16-byte lanes, 46 ms with these and 42 ms with AVX-512's ([`Lanes64`]). The
/// masks are taken with the tricks of [`Lanes64`], ten instructions for 32 bytes instead of
/// thirteen (the picker's instructions -3.5% on 129 files of the bench store, its time the same).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Lanes32(pub(super) pulp::x86::V3);

#[cfg(target_arch = "x86_64")]
impl BlockMasks for Lanes32 {
    #[inline(always)]
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64) {
        use core::arch::x86_64::__m256i;
        let Lanes32(simd) = self;
        let (avx, avx2) = (simd.avx, simd.avx2);
        let table: __m256i = pulp::cast([USUAL_BY_LOW_BITS; 2]);
        let (mut quote_or_control, mut backslash, mut usual) = (0u64, 0u64, 0u64);
        for k in 0..2 {
            let mut lanes = [0u8; 32];
            lanes.copy_from_slice(&block[k * 32..k * 32 + 32]);
            let v: __m256i = pulp::cast(lanes);
            // Straight-line calls: a closure would be built without AVX2 and not inlined.
            // A quote xor 2 is 0x20, and a byte below 0x20 stays below it: one compare for both.
            let flipped = avx2._mm256_xor_si256(v, avx._mm256_set1_epi8(2));
            let stops = avx2._mm256_cmpeq_epi8(avx2._mm256_min_epu8(flipped, avx._mm256_set1_epi8(0x20)), flipped);
            let backslashes = avx2._mm256_cmpeq_epi8(v, avx._mm256_set1_epi8(b'\\' as i8));
            // The usual escape letters by their low four bits: a byte equal to its entry is one.
            let letters = avx2._mm256_cmpeq_epi8(avx2._mm256_shuffle_epi8(table, v), v);
            let shift = k * 32;
            quote_or_control |= u64::from(avx2._mm256_movemask_epi8(stops) as u32) << shift;
            backslash |= u64::from(avx2._mm256_movemask_epi8(backslashes) as u32) << shift;
            usual |= u64::from(avx2._mm256_movemask_epi8(letters) as u32) << shift;
        }
        (quote_or_control, backslash, usual)
    }

    #[inline(always)]
    fn odd_escapes(self, b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
        use core::arch::x86_64::__m256i;
        let Lanes32(simd) = self;
        let (avx, avx2) = (simd.avx, simd.avx2);
        let low_table: __m256i = pulp::cast([CLASS_BY_LOW_NIBBLE; 2]);
        let high_table: __m256i = pulp::cast([CLASS_BY_HIGH_NIBBLE; 2]);
        let nibble = avx._mm256_set1_epi8(0x0F);
        let (mut letter, mut hex, mut u) = (0u64, 0u64, 0u64);
        for k in 0..2 {
            let mut lanes = [0u8; 32];
            lanes.copy_from_slice(&block[k * 32..k * 32 + 32]);
            let v: __m256i = pulp::cast(lanes);
            let low = avx2._mm256_shuffle_epi8(low_table, avx2._mm256_and_si256(v, nibble));
            let high_nibble = avx2._mm256_and_si256(avx2._mm256_srli_epi16::<4>(v), nibble);
            let classes = avx2._mm256_and_si256(low, avx2._mm256_shuffle_epi8(high_table, high_nibble));
            // Straight-line calls, as in `masks`. A byte is in a class when its bits there are not all zero.
            let zero = avx._mm256_setzero_si256();
            let none_letter =
                avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(classes, avx._mm256_set1_epi8(ESCAPE_LETTER as i8)), zero);
            let none_hex =
                avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(classes, avx._mm256_set1_epi8(HEX_DIGIT as i8)), zero);
            let none_u =
                avx2._mm256_cmpeq_epi8(avx2._mm256_and_si256(classes, avx._mm256_set1_epi8(LETTER_U as i8)), zero);
            let shift = k * 32;
            letter |= u64::from(!(avx2._mm256_movemask_epi8(none_letter) as u32)) << shift;
            hex |= u64::from(!(avx2._mm256_movemask_epi8(none_hex) as u32)) << shift;
            u |= u64::from(!(avx2._mm256_movemask_epi8(none_u) as u32)) << shift;
        }
        odd_escapes_by_class(b, i, block, letters, (letter, hex, u))
    }
}

/// 64-byte AVX-512 lanes (`AVX512BW`): the compares give the bit masks directly.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Lanes64(pub(super) pulp::x86::V4);

#[cfg(target_arch = "x86_64")]
impl BlockMasks for Lanes64 {
    #[inline(always)]
    fn masks(self, block: &[u8; 64]) -> (u64, u64, u64) {
        use core::arch::x86_64::__m512i;
        let Lanes64(simd) = self;
        let (f, bw) = (simd.avx512f, simd.avx512bw);
        let v: __m512i = pulp::cast(*block);
        // A quote xor 2 is 0x20, and a byte below 0x20 stays below it: one compare for both.
        let quote_or_control =
            bw._mm512_cmple_epu8_mask(f._mm512_xor_si512(v, f._mm512_set1_epi8(2)), f._mm512_set1_epi8(0x20));
        let backslashes = bw._mm512_cmpeq_epi8_mask(v, f._mm512_set1_epi8(b'\\' as i8));
        // The usual escape letters by their low four bits: a byte equal to its table entry is one.
        let table: __m512i = pulp::cast([USUAL_BY_LOW_BITS; 4]);
        let usual = bw._mm512_cmpeq_epi8_mask(bw._mm512_shuffle_epi8(table, v), v);
        (quote_or_control, backslashes, usual)
    }

    #[inline(always)]
    fn odd_escapes(self, b: &[u8], i: usize, block: &[u8; 64], letters: u64) -> u64 {
        use core::arch::x86_64::__m512i;
        let Lanes64(simd) = self;
        let (f, bw) = (simd.avx512f, simd.avx512bw);
        let v: __m512i = pulp::cast(*block);
        let nibble = f._mm512_set1_epi8(0x0F);
        let low = bw._mm512_shuffle_epi8(pulp::cast([CLASS_BY_LOW_NIBBLE; 4]), f._mm512_and_si512(v, nibble));
        let high_nibble = f._mm512_and_si512(bw._mm512_srli_epi16::<4>(v), nibble);
        let high = bw._mm512_shuffle_epi8(pulp::cast([CLASS_BY_HIGH_NIBBLE; 4]), high_nibble);
        let classes = f._mm512_and_si512(low, high);
        let letter = bw._mm512_test_epi8_mask(classes, f._mm512_set1_epi8(ESCAPE_LETTER as i8));
        let hex = bw._mm512_test_epi8_mask(classes, f._mm512_set1_epi8(HEX_DIGIT as i8));
        let u = bw._mm512_test_epi8_mask(classes, f._mm512_set1_epi8(LETTER_U as i8));
        odd_escapes_by_class(b, i, block, letters, (letter, hex, u))
    }
}

/// Scans the inside of a string from `i` (a byte not escaped) 64 bytes at a time and returns
/// where the byte-by-byte loop must take over: the closing quote, a control byte, the backslash
/// of an escape that is not well-formed (with `PRINTED`, or not one `JSON.stringify` prints), or
/// the last bytes of the input. The masks are taken with
/// the widest lanes the CPU has. Scanning 300 MB of the bench store's lines once each, from
/// cache: 42.5 ms when the string first went sixteen bytes at a time and then to a separate call
/// in 128-byte stretches (`u128` masks); 41.5 ms so; 43.0 ms so but in 128-byte stretches.
#[inline(always)]
pub(super) fn string_blocks_with<const PRINTED: bool>(
    lanes: impl BlockMasks,
    b: &[u8],
    mut i: usize,
    escaped: &mut bool,
) -> usize {
    // The first byte of a block is escaped by a backslash that ended the previous one.
    let mut carry = 0u64;
    // The backslashes of the blocks passed whole, or-ed: one test at the end.
    let mut backslashes = 0u64;
    while let Some(block) = b.get(i..i + 64) {
        if let Some(stop) = block64::<PRINTED>(lanes, b, i, first_64(block), &mut carry, &mut backslashes, escaped) {
            *escaped |= backslashes != 0;
            return stop;
        }
        i += 64;
    }
    *escaped |= backslashes != 0;
    i - carry as usize
}

/// One block of [`string_blocks_with`], `block` (at `i`): the stop in it, if any; else `carry`
/// (the block's last byte is an escaping backslash) is set for the next, and its backslashes
/// added to `backslashes`. Which bytes are escaped is worked out for the whole block at once from
/// the runs of backslashes; `\n`, `\"` and `\t` are known good from the masks, and the other
/// escaped bytes are checked by [`BlockMasks::odd_escapes`] (with AVX2 or AVX-512, the whole block
/// at once: strings of tool results with `\u` escapes take 18.9 ms from cache against 21.6 ms a
/// byte at a time). A block with neither such a byte nor a stop passes after one branch (with two,
/// every hot path takes 0.2-0.5% more instructions). Before the runs, a block whose backslashes
/// each escape a usual letter passes on a shorter test (the picker's instructions -4.7% on 129
/// files of the bench store, tool-result lines 11-12% faster from cache).
#[inline(always)]
pub(super) fn block64<const PRINTED: bool>(
    lanes: impl BlockMasks,
    b: &[u8],
    i: usize,
    block: &[u8; 64],
    carry: &mut u64,
    backslashes: &mut u64,
    escaped: &mut bool,
) -> Option<usize> {
    const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    let (quote_or_control, backslash, usual) = lanes.masks(block);
    // While no backslash is escaped, every backslash escapes the byte after it: when those
    // bytes are all usual letters (so none is a backslash) and no stop is left unescaped, the
    // block passes without the runs worked out.
    let after_backslash = (backslash << 1) | *carry;
    if (after_backslash & !usual) | (quote_or_control & !after_backslash) == 0 {
        *backslashes |= backslash;
        *carry = backslash >> 63;
        return None;
    }
    let potential = backslash & !*carry;
    let code = (((potential << 1) | ODD).wrapping_sub(potential)) ^ ODD;
    let escaped_bytes = code ^ (potential | *carry);
    let escapes = code & backslash;
    let letters = escaped_bytes & !backslash & !usual;
    let direct = quote_or_control & !escaped_bytes;
    // One branch for both: a block with neither (most of them) goes straight on.
    if letters | direct != 0 {
        let odd_escape = match letters {
            0 => 0,
            _ if PRINTED => unprinted_escapes(b, i, letters),
            _ => lanes.odd_escapes(b, i, block, letters),
        };
        if odd_escape | direct != 0 {
            // The first stop: a direct one at its byte, an odd escape at its backslash.
            let at_direct = if direct != 0 { i + direct.trailing_zeros() as usize } else { usize::MAX };
            let at_escape = if odd_escape != 0 { i + odd_escape.trailing_zeros() as usize - 1 } else { usize::MAX };
            let stop = at_direct.min(at_escape);
            if stop >= i && backslash & ((1u64 << (stop - i)) - 1) != 0 {
                *escaped = true;
            }
            return Some(stop);
        }
    }
    *backslashes |= backslash;
    *carry = escapes >> 63;
    None
}

/// Of the escaped bytes `letters` of the block at `i` in `b`, those whose escape is not one
/// `JSON.stringify` prints ([`printed_escape`]), one at a time.
#[inline(always)]
fn unprinted_escapes(b: &[u8], i: usize, letters: u64) -> u64 {
    let mut odd = 0u64;
    let mut unchecked = letters;
    while unchecked != 0 {
        let p = unchecked.trailing_zeros() as usize;
        if !printed_escape(b, i + p - 1) {
            odd |= unchecked & unchecked.wrapping_neg();
        }
        unchecked &= unchecked - 1;
    }
    odd
}

/// The first 64 bytes of `bytes` (its length is checked by the caller).
#[inline(always)]
pub(super) fn first_64(bytes: &[u8]) -> &[u8; 64] {
    const ZERO: [u8; 64] = [0; 64];
    bytes.first_chunk().unwrap_or(&ZERO)
}
