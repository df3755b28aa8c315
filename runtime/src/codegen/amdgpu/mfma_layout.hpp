// Where a 16x16 MFMA's operands come from in the DSL's fx.mma fragments,
// and where the DSL's result comes from in MFMA's, per lane of the wave.
//
// The DSL's fragments are NVIDIA's m16n8k16 / m16n8k32 (language/matrix.py):
// lane (g, t) = (lane / 4, lane % 4) of a 32-lane half-wave holds
//   A words w = 0..3: row g + 8 (w % 2), k from P t + 4P (w / 2),
//   B words w = 0..1: column g, k from P t + 4P w,
//   C / D element x = 0..3: row g + 8 (x / 2), column 2t + x % 2,
// with P = 2 (f16, bf16) or 4 (FP8) elements in a 32-bit word. MFMA's lane
// l = r + 16q feeds row (or column) r of its operand with two words, d = 0,
// 1, at k slots of its own, and holds D's rows 4q..4q + 3 of column r.
//
// A product sums over k, so any one-to-one assignment of the DSL's k to
// MFMA's slots, the same for A and B, gives the same sums; likewise MFMA's
// rows may hold the DSL's in any order the result's reading follows. The
// choice here (lane (r, q) word d gets k from P q + 4P d, and MFMA row
// 4 (g % 4) + 2 (g / 4) + h holds the DSL's row g + 8h) lets every operand
// word and result element come from one lane of at most two registers:
// one cross-lane read (ds_bpermute) per B word, two per A word and per
// result element, where the DSL's own k order needed up to four.
//
// Templated on the lane's integer type: unsigned in the exhaustive test
// (tests/cpp/test_mfma_layout.cpp), an IR value in codegen.
#pragma once

namespace flyrt::codegen::amdgpu::mfma_layout
{

// A lane and which of two candidate registers it is read from.
template <class I> struct source
{
    I lane;
    I pick;
};

// MFMA lane `l`'s A word d: DSL A word (pick + 2d) of `lane` in the half-wave.
template <class I> source<I> a_word(I l)
{
    const I r = l % 16u;
    const I g = r / 4u + 4u * ((r / 2u) % 2u); // the DSL's row g + 8 (r % 2)
    return {4u * g + l / 16u, r % 2u};
}

// MFMA lane `l`'s B word d: DSL B word d of the returned lane in the
// half-wave. Columns 8-15 repeat 0-7: their results are never read.
template <class I> I b_word(I l)
{
    return 4u * (l % 8u) + l / 16u;
}

// Element x of the DSL's D in `lane` of a half-wave: MFMA lane `lane` of the
// result, item (x / 2 + 2 pick).
template <class I> source<I> d_element(I lane, unsigned x)
{
    const I g = lane / 4u;
    return {2u * (lane % 4u) + x % 2u + 16u * (g % 4u), g / 4u};
}

} // namespace flyrt::codegen::amdgpu::mfma_layout
