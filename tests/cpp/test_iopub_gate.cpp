#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "iopub_gate.hpp"

using xflydsl::iopub_gate;

TEST(IopubGate, OwnerThreadAlwaysPublishes)
{
    iopub_gate gate;
    int published = 0;
    EXPECT_TRUE(gate.run_if_allowed([&] { ++published; }));
    gate.run_or_defer([&] { ++published; });
    EXPECT_EQ(published, 2);
}

TEST(IopubGate, OtherThreadsWaitForARequest)
{
    iopub_gate gate;
    std::vector<int> order;
    bool allowed = true;
    std::thread(
        [&]
        {
            allowed = gate.run_if_allowed([&] { order.push_back(0); });
            gate.run_or_defer([&] { order.push_back(1); });
        })
        .join();
    EXPECT_FALSE(allowed);
    EXPECT_TRUE(order.empty());

    gate.open(); // the deferred action runs as the request starts
    EXPECT_EQ(order, std::vector<int>{1});

    std::thread([&] { allowed = gate.run_if_allowed([&] { order.push_back(2); }); }).join();
    EXPECT_TRUE(allowed);
    gate.close();
    std::thread([&] { allowed = gate.run_if_allowed([&] { order.push_back(3); }); }).join();
    EXPECT_FALSE(allowed);
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
}
