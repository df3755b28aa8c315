#include "inline_math.hpp"

#include <cstdint>
#include <limits>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace flyrt::codegen
{
namespace
{

struct constants
{
    llvm::IRBuilder<>& b;
    llvm::Type* real_type;
    llvm::Type* int_type;

    // Integers as wide as the reals (f32: i32, f64: i64), for their bits.
    constants(llvm::IRBuilder<>& builder, llvm::Value* x)
        : b(builder), real_type(x->getType()), int_type(x->getType()->getWithNewType(builder.getIntNTy(
                                                   x->getType()->getScalarType()->getPrimitiveSizeInBits())))
    {
    }
    llvm::Constant* real(double v) const { return llvm::ConstantFP::get(real_type, v); }
    llvm::Constant* integer(std::int64_t v) const
    {
        return llvm::ConstantInt::get(int_type, static_cast<std::uint64_t>(v), true);
    }
    llvm::Value* fma(llvm::Value* a, llvm::Value* x, llvm::Value* c) const
    {
        return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {real_type}, {a, x, c});
    }
    llvm::Value* clamp(llvm::Value* x, double low, double high) const
    {
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum,
                                       b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, real(low)),
                                       real(high));
    }
    llvm::Value* round_down(llvm::Value* x) const
    {
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    }
};

// 2^r for |r| <= 1/2: 1 + r q(r) with q a degree-5 fit (Lawson-weighted
// least squares on Chebyshev nodes; max relative error 1.0e-7).
llvm::Value* exp2_reduced(const constants& c, llvm::Value* r)
{
    llvm::Value* q = c.real(1.53533575e-04);
    for (double k : {1.33988761e-03, 9.61843739e-03, 5.55033247e-02, 2.40226479e-01, 6.93147203e-01})
    {
        q = c.fma(q, r, c.real(k));
    }
    return c.fma(r, q, c.real(1.0));
}

// p * 2^n for an integral n (f32: in [-151, 129]; f64: in [-1080, 1030]),
// as two exponent-field scalings, each a normal power of two, so that
// results that overflow or are subnormal are rounded once, by the second.
llvm::Value* scale_by_power_of_two(const constants& c, llvm::Value* p, llvm::Value* n)
{
    llvm::IRBuilder<>& b = c.b;
    const bool f64 = c.real_type->getScalarType()->isDoubleTy();
    const std::int64_t bias = f64 ? 1023 : 127;
    const std::int64_t mantissa_bits = f64 ? 52 : 23;
    llvm::Value* exponent = b.CreateFPToSI(n, c.int_type);
    llvm::Value* half = b.CreateAShr(exponent, c.integer(1));
    auto power_of_two = [&](llvm::Value* e)
    {
        return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, c.integer(bias)), c.integer(mantissa_bits)),
                               c.real_type);
    };
    return b.CreateFMul(b.CreateFMul(p, power_of_two(half)), power_of_two(b.CreateSub(exponent, half)));
}

llvm::Value* keep_nan(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* result)
{
    return b.CreateSelect(b.CreateFCmpUNO(x, x), x, result);
}

// e^r for |r| <= ln 2 / 2: its Taylor series to r^13 (the next term is
// below 5e-18 of the result), by Horner's rule.
llvm::Value* exp_reduced_f64(const constants& c, llvm::Value* r)
{
    double coefficient = 1.0;
    for (int k = 2; k <= 13; ++k)
    {
        coefficient /= k;
    }
    llvm::Value* p = c.real(coefficient);
    for (int k = 12; k >= 0; --k)
    {
        coefficient *= (k + 1);
        p = c.fma(p, r, c.real(coefficient)); // coefficient is 1 / k! here
    }
    return p;
}

// The nearest integer (ties to even) of |x| < 2^51, by the 1.5 * 2^52 trick.
llvm::Value* round_to_integer_f64(const constants& c, llvm::Value* x)
{
    constexpr double shifter = 6755399441055744.0; // 1.5 * 2^52
    return c.b.CreateFSub(c.b.CreateFAdd(x, c.real(shifter)), c.real(shifter));
}

} // namespace

llvm::Value* exp_f64(llvm::IRBuilder<>& b, llvm::Value* x)
{
    const constants c(b, x);
    // e^x = 2^n e^r, r = x - n ln 2 with ln 2 in two parts (fdlibm's: n
    // times the first is exact), so |r| <= ln 2 / 2.
    llvm::Value* clamped = c.clamp(x, -746.0, 710.0);
    llvm::Value* n = round_to_integer_f64(c, b.CreateFMul(clamped, c.real(1.4426950408889634)));
    llvm::Value* r = b.CreateFSub(clamped, b.CreateFMul(n, c.real(6.93147180369123816490e-01)));
    r = b.CreateFSub(r, b.CreateFMul(n, c.real(1.90821492927058770002e-10)));
    return keep_nan(b, x, scale_by_power_of_two(c, exp_reduced_f64(c, r), n));
}

llvm::Value* exp2_f64(llvm::IRBuilder<>& b, llvm::Value* x)
{
    const constants c(b, x);
    llvm::Value* clamped = c.clamp(x, -1080.0, 1030.0);
    llvm::Value* n = round_to_integer_f64(c, clamped);
    llvm::Value* r =
        b.CreateFMul(b.CreateFSub(clamped, n), c.real(0.69314718055994530942)); // exact difference
    return keep_nan(b, x, scale_by_power_of_two(c, exp_reduced_f64(c, r), n));
}

llvm::Value* log_f64(llvm::IRBuilder<>& b, llvm::Value* x, bool base2)
{
    // x = 2^k m with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s) with
    // s = (m - 1) / (m + 1), |s| < 0.172: 2s (1 + s^2/3 + ... + s^24/25).
    const constants c(b, x);
    llvm::Value* subnormal = b.CreateFCmpOLT(x, c.real(std::numeric_limits<double>::min()));
    llvm::Value* scaled = b.CreateSelect(subnormal, b.CreateFMul(x, c.real(18014398509481984.0)), x); // 2^54
    constexpr std::int64_t one = 0x3ff0000000000000;
    constexpr std::int64_t sqrt_half = 0x3fe6a09e667f3bcd;
    llvm::Value* bits = b.CreateAdd(b.CreateBitCast(scaled, c.int_type), c.integer(one - sqrt_half));
    llvm::Value* k = b.CreateAdd(b.CreateSub(b.CreateAShr(bits, c.integer(52)), c.integer(0x3ff)),
                                 b.CreateSelect(subnormal, c.integer(-54), c.integer(0)));
    llvm::Value* m = b.CreateBitCast(
        b.CreateAdd(b.CreateAnd(bits, c.integer(0x000fffffffffffff)), c.integer(sqrt_half)), c.real_type);
    llvm::Value* s = b.CreateFDiv(b.CreateFSub(m, c.real(1.0)), b.CreateFAdd(m, c.real(1.0)));
    llvm::Value* z = b.CreateFMul(s, s);
    llvm::Value* q = c.real(1.0 / 25.0);
    for (int odd = 23; odd >= 3; odd -= 2)
    {
        q = c.fma(q, z, c.real(1.0 / odd));
    }
    llvm::Value* two_s = b.CreateFAdd(s, s);
    llvm::Value* log_m = b.CreateFAdd(two_s, b.CreateFMul(two_s, b.CreateFMul(z, q)));
    llvm::Value* dk = b.CreateSIToFP(k, c.real_type);
    llvm::Value* result = nullptr;
    if (base2)
    {
        result = b.CreateFAdd(dk, b.CreateFMul(log_m, c.real(1.4426950408889634))); // exact at powers of two
    }
    else
    {
        result = b.CreateFAdd(b.CreateFMul(dk, c.real(6.93147180369123816490e-01)),
                              b.CreateFAdd(b.CreateFMul(dk, c.real(1.90821492927058770002e-10)), log_m));
    }
    const double inf = std::numeric_limits<double>::infinity();
    result = b.CreateSelect(b.CreateFCmpOEQ(x, c.real(inf)), x, result);
    result = b.CreateSelect(
        b.CreateFCmpULT(x, c.real(0.0)), c.real(std::numeric_limits<double>::quiet_NaN()), result);
    return b.CreateSelect(b.CreateFCmpOEQ(x, c.real(0.0)), c.real(-inf), result);
}

llvm::Value* exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x)
{
    const constants c(b, x);
    llvm::Value* clamped = c.clamp(x, -151.0, 129.0);
    llvm::Value* n = c.round_down(b.CreateFAdd(clamped, c.real(0.5)));
    llvm::Value* r = b.CreateFSub(clamped, n);
    return keep_nan(b, x, scale_by_power_of_two(c, exp2_reduced(c, r), n));
}

llvm::Value* exp_f32(llvm::IRBuilder<>& b, llvm::Value* x)
{
    const constants c(b, x);
    constexpr double log2e = 1.4426950408889634;
    // e^x = 2^n e^r with r = x - n ln 2 (Cody and Waite: ln 2 in two parts,
    // the first exact in a product with n).
    llvm::Value* clamped = c.clamp(x, -104.0, 89.0);
    llvm::Value* n = c.round_down(c.fma(clamped, c.real(log2e), c.real(0.5)));
    llvm::Value* r = c.fma(n, c.real(-0.693145751953125), clamped);
    r = c.fma(n, c.real(-1.428606765330187e-06), r);
    llvm::Value* p = exp2_reduced(c, b.CreateFMul(r, c.real(log2e)));
    return keep_nan(b, x, scale_by_power_of_two(c, p, n));
}

llvm::Value* log_f32(llvm::IRBuilder<>& b, llvm::Value* x, bool base2)
{
    // x = 2^k m with m in [sqrt(1/2), sqrt(2)); log(m) = log(1 + f) from
    // s = f / (2 + f) and a polynomial in s^2 (as FreeBSD's logf).
    const constants c(b, x);
    llvm::Value* subnormal = b.CreateFCmpOLT(x, c.real(std::numeric_limits<float>::min()));
    llvm::Value* scaled = b.CreateSelect(subnormal, b.CreateFMul(x, c.real(33554432.0)), x); // 2^25
    llvm::Value* bits = b.CreateAdd(b.CreateBitCast(scaled, c.int_type), c.integer(0x3f800000 - 0x3f3504f3));
    llvm::Value* k = b.CreateAdd(b.CreateSub(b.CreateAShr(bits, c.integer(23)), c.integer(0x7f)),
                                 b.CreateSelect(subnormal, c.integer(-25), c.integer(0)));
    llvm::Value* m = b.CreateBitCast(
        b.CreateAdd(b.CreateAnd(bits, c.integer(0x007fffff)), c.integer(0x3f3504f3)), c.real_type);
    llvm::Value* f = b.CreateFSub(m, c.real(1.0));
    llvm::Value* s = b.CreateFDiv(f, b.CreateFAdd(c.real(2.0), f));
    llvm::Value* z = b.CreateFMul(s, s);
    llvm::Value* w = b.CreateFMul(z, z);
    llvm::Value* t1 = b.CreateFMul(w, c.fma(w, c.real(0.24279078841), c.real(0.40000972152)));
    llvm::Value* t2 = b.CreateFMul(z, c.fma(w, c.real(0.28498786688), c.real(0.66666662693)));
    llvm::Value* big_r = b.CreateFAdd(t2, t1);
    llvm::Value* hfsq = b.CreateFMul(b.CreateFMul(c.real(0.5), f), f);
    llvm::Value* dk = b.CreateSIToFP(k, c.real_type);
    llvm::Value* tail = b.CreateFMul(s, b.CreateFAdd(hfsq, big_r));
    llvm::Value* result = nullptr;
    if (base2)
    {
        // f - hfsq split into a high part with 12 bits, so that k + ... is exact at powers of two.
        llvm::Value* hi = b.CreateBitCast(
            b.CreateAnd(b.CreateBitCast(b.CreateFSub(f, hfsq), c.int_type), c.integer(-4096)), c.real_type);
        llvm::Value* lo = b.CreateFAdd(b.CreateFSub(b.CreateFSub(f, hi), hfsq), tail);
        constexpr double inv_ln2_hi = 1.4428710938e+00;
        constexpr double inv_ln2_lo = -1.7605285393e-04;
        result = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(b.CreateFAdd(lo, hi), c.real(inv_ln2_lo)),
                                           b.CreateFMul(lo, c.real(inv_ln2_hi))),
                              b.CreateFMul(hi, c.real(inv_ln2_hi)));
        result = b.CreateFAdd(result, dk);
    }
    else
    {
        constexpr double ln2_hi = 6.9313812256e-01;
        constexpr double ln2_lo = 9.0580006145e-06;
        result = b.CreateFAdd(
            b.CreateFAdd(b.CreateFSub(b.CreateFAdd(tail, b.CreateFMul(dk, c.real(ln2_lo))), hfsq), f),
            b.CreateFMul(dk, c.real(ln2_hi)));
    }
    const double inf = std::numeric_limits<double>::infinity();
    result = b.CreateSelect(b.CreateFCmpOEQ(x, c.real(inf)), x, result);
    result = b.CreateSelect(
        b.CreateFCmpULT(x, c.real(0.0)), c.real(std::numeric_limits<double>::quiet_NaN()), result);
    return b.CreateSelect(b.CreateFCmpOEQ(x, c.real(0.0)), c.real(-inf), result);
}

} // namespace flyrt::codegen
