#include "float_conversions.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace flyrt::jit
{
namespace
{

std::uint32_t bits_of(float x)
{
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
}

float float_of(std::uint32_t bits)
{
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

// Nearest, ties to even; a NaN stays a NaN of the same sign, made quiet.
std::uint32_t bfloat16_bits(float x)
{
    const std::uint32_t bits = bits_of(x);
    if (std::isnan(x))
    {
        return (bits >> 16) | 0x40u;
    }
    return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
}

// `x` as a float rounded to odd: rounding that once more to BFloat16 gives
// what one rounding of `x` would (a float has more than twice its bits).
float round_to_odd(double x)
{
    const float nearest = static_cast<float>(x);
    if (std::isnan(x) || static_cast<double>(nearest) == x)
    {
        return nearest;
    }
    std::uint32_t bits = bits_of(nearest);
    if (std::fabs(static_cast<double>(nearest)) > std::fabs(x))
    {
        --bits; // toward zero: one step down in magnitude
    }
    return float_of(bits | 1u);
}

} // namespace

extern "C" float flyrt_truncsfbf2(float x)
{
    return float_of(bfloat16_bits(x));
}

extern "C" float flyrt_truncdfbf2(double x)
{
    return float_of(bfloat16_bits(round_to_odd(x)));
}

} // namespace flyrt::jit
