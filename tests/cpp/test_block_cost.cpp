// The estimate that sends a launch to the thread pool: per kernel, from its
// timed launches, forgotten when another kernel takes the slot.
#include <gtest/gtest.h>

#include <chrono>

#include "launch/cpu/block_cost.hpp"

using flyrt::launch::block_cost;
using namespace std::chrono_literals;

TEST(BlockCost, UnknownUntilTimedThenPerBlockFromAnyWorkerCount)
{
    block_cost cost;
    int kernel = 0;
    EXPECT_EQ(cost.expected_ns(&kernel, 8), 0u);
    EXPECT_FALSE(cost.known(&kernel));
    EXPECT_TRUE(cost.sample(&kernel)); // nothing known: time it
    cost.record(&kernel, 8, 1, 8ms);   // 8 blocks on the caller alone
    EXPECT_TRUE(cost.known(&kernel));
    EXPECT_EQ(cost.expected_ns(&kernel, 8), 8'000'000u);
    EXPECT_EQ(cost.expected_ns(&kernel, 2), 2'000'000u);
    cost.record(&kernel, 8, 2, 2ms); // 8 blocks on two workers: 0.5 ms each
    EXPECT_EQ(cost.expected_ns(&kernel, 8), 4'000'000u);
}

TEST(BlockCost, SamplesOneLaunchInSixteenAndForgetsAnotherKernel)
{
    block_cost cost;
    int kernel = 0;
    int other = 0;
    cost.record(&kernel, 1, 1, 1us);
    int sampled = 0;
    for (int i = 0; i < 32; ++i)
    {
        sampled += cost.sample(&kernel) ? 1 : 0;
    }
    EXPECT_EQ(sampled, 2);
    EXPECT_EQ(cost.expected_ns(&other, 4), 0u); // the slot holds another kernel's cost
    EXPECT_TRUE(cost.sample(&other));
    cost.record(&other, 4, 1, 40us);
    EXPECT_EQ(cost.expected_ns(&other, 4), 40'000u);
    EXPECT_EQ(cost.expected_ns(&kernel, 4), 0u);
}

TEST(BlockCost, EveryKernelHasASlot)
{
    int kernels[4] = {};
    EXPECT_EQ(&block_cost::of(&kernels[0]), &block_cost::of(&kernels[0]));
    // distinct addresses 4 bytes apart do not all share one slot
    EXPECT_FALSE(&block_cost::of(&kernels[0]) == &block_cost::of(&kernels[1]) &&
                 &block_cost::of(&kernels[1]) == &block_cost::of(&kernels[2]) &&
                 &block_cost::of(&kernels[2]) == &block_cost::of(&kernels[3]));
}
