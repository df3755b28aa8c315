// fx.mma on AMD's MFMA: every lane's operand words and result elements, as
// codegen/amdgpu/mfma_layout.hpp places them, checked against the DSL's
// fragment layouts (language/matrix.py): the MFMA then computes the DSL's
// product exactly, each k once, and each lane reads back its own elements.
#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

#include "codegen/amdgpu/mfma_layout.hpp"

namespace layout = flyrt::codegen::amdgpu::mfma_layout;

namespace
{

// (row, k) of element e of the DSL's A word w in half-wave lane `lane`, P elements a word.
std::pair<unsigned, unsigned> dsl_a(unsigned lane, unsigned w, unsigned e, unsigned p)
{
    return {lane / 4 + 8 * (w % 2), p * (lane % 4) + e + 4 * p * (w / 2)};
}

// (k, column) of element e of the DSL's B word w.
std::pair<unsigned, unsigned> dsl_b(unsigned lane, unsigned w, unsigned e, unsigned p)
{
    return {p * (lane % 4) + e + 4 * p * w, lane / 4};
}

// The DSL's rows that MFMA's rows hold, read off the A operand's sources.
std::vector<unsigned> mfma_rows(unsigned p)
{
    std::vector<unsigned> rows;
    for (unsigned r = 0; r < 16; ++r)
    {
        const auto from = layout::a_word(r);
        rows.push_back(dsl_a(from.lane, from.pick, 0, p).first);
    }
    return rows;
}

} // namespace

class MfmaLayout : public testing::TestWithParam<unsigned> // elements in a word: 2 (f16, bf16), 4 (FP8)
{
};

TEST_P(MfmaLayout, EachRowAndColumnPairMultipliesEveryKOnce)
{
    const unsigned p = GetParam();
    const std::vector<unsigned> rows = mfma_rows(p);
    EXPECT_EQ(std::set<unsigned>(rows.begin(), rows.end()).size(), 16u)
        << "MFMA's rows hold each DSL row once";
    for (unsigned r = 0; r < 16; ++r)
    {
        for (unsigned c = 0; c < 8; ++c)
        {
            std::set<unsigned> ks;
            for (unsigned q = 0; q < 4; ++q) // MFMA's k slots: lane group q, word d, element e
            {
                for (unsigned d = 0; d < 2; ++d)
                {
                    for (unsigned e = 0; e < p; ++e)
                    {
                        const auto a = layout::a_word(r + 16 * q);
                        ASSERT_LT(a.lane, 32u);
                        ASSERT_LT(a.pick, 2u);
                        const auto [row, k] = dsl_a(a.lane, a.pick + 2 * d, e, p);
                        const auto [k_b, column] = dsl_b(layout::b_word(c + 16 * q), d, e, p);
                        EXPECT_EQ(row, rows[r]) << "MFMA row " << r << ", slot " << q << "/" << d << "/" << e;
                        EXPECT_EQ(column, c);
                        EXPECT_EQ(k, k_b) << "A and B meet at one k: row " << r << ", column " << c;
                        ks.insert(k);
                    }
                }
            }
            // K = 8P: as many k as slots, each once
            EXPECT_EQ(ks.size(), 8 * p) << "every k of the product once: row " << r << ", column " << c;
            EXPECT_LT(*ks.rbegin(), 8 * p);
        }
    }
}

TEST_P(MfmaLayout, EachLaneReadsBackItsOwnResultElements)
{
    const std::vector<unsigned> rows = mfma_rows(GetParam());
    for (unsigned lane = 0; lane < 32; ++lane)
    {
        for (unsigned x = 0; x < 4; ++x)
        {
            const auto from = layout::d_element(lane, x);
            ASSERT_LT(from.lane, 64u);
            ASSERT_LT(from.pick, 2u);
            const unsigned item = x / 2 + 2 * from.pick;
            // MFMA's D: lane L, item i is row 4 (L / 16) + i, column L % 16
            EXPECT_EQ(rows[4 * (from.lane / 16) + item], lane / 4 + 8 * (x / 2))
                << "lane " << lane << ", x " << x;
            EXPECT_EQ(from.lane % 16, 2 * (lane % 4) + x % 2) << "lane " << lane << ", x " << x;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(WordsOf, MfmaLayout, testing::Values(2u, 4u));
