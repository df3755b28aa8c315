#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "output_channel.hpp"

using namespace std::chrono_literals;
using xflydsl::iopub_gate;
using xflydsl::output_channel;

namespace
{

// Records what the channel publishes, from whichever thread.
struct recorder
{
    std::mutex mutex;
    std::vector<std::pair<std::string, std::string>> messages;

    output_channel::publisher publisher()
    {
        return [this](const std::string& name, const std::string& text)
        {
            std::lock_guard<std::mutex> lock(mutex);
            messages.emplace_back(name, text);
        };
    }

    std::string text_of(const std::string& name)
    {
        std::lock_guard<std::mutex> lock(mutex);
        std::string text;
        for (const auto& [n, t] : messages)
        {
            if (n == name)
            {
                text += t;
            }
        }
        return text;
    }
};

} // namespace

TEST(OutputChannel, BuffersWritesUntilFlushed)
{
    iopub_gate gate;
    recorder published;
    output_channel channel(gate, published.publisher(), 10s);
    for (int i = 0; i < 100; ++i)
    {
        channel.write("stdout", std::to_string(i) + "\n");
    }
    EXPECT_TRUE(published.messages.empty());
    channel.flush();
    ASSERT_EQ(published.messages.size(), 1u); // one message, not a hundred
    EXPECT_EQ(published.messages[0].second.substr(0, 4), "0\n1\n");
}

TEST(OutputChannel, KeepsStreamsApart)
{
    iopub_gate gate;
    recorder published;
    output_channel channel(gate, published.publisher(), 10s);
    channel.write("stdout", "out");
    channel.write("stderr", "err");
    channel.flush();
    EXPECT_EQ(published.text_of("stdout"), "out");
    EXPECT_EQ(published.text_of("stderr"), "err");
}

TEST(OutputChannel, PublishesALargeBufferAtOnce)
{
    iopub_gate gate;
    recorder published;
    output_channel channel(gate, published.publisher(), 10s, 1024);
    channel.write("stdout", std::string(2000, 'x'));
    EXPECT_EQ(published.text_of("stdout").size(), 2000u);
}

TEST(OutputChannel, CapturesAFileDescriptorWithSplitCharacters)
{
    const int fd = open("/dev/null", O_WRONLY);
    ASSERT_GE(fd, 0);
    iopub_gate gate;
    recorder published;
    {
        output_channel channel(gate, published.publisher(), 10s);
        channel.capture_fd(fd, "stdout");
        const std::string euro = "\xE2\x82\xAC";
        ASSERT_EQ(::write(fd, "price: \xE2\x82", 9), 9);
        channel.flush();
        EXPECT_EQ(published.text_of("stdout"), "price: "); // half a character waits
        ASSERT_EQ(::write(fd, "\xAC\n", 2), 2);
        channel.flush();
        EXPECT_EQ(published.text_of("stdout"), "price: " + euro + "\n");
    }
    // The descriptor points at /dev/null again once the channel is gone.
    EXPECT_EQ(::write(fd, "x", 1), 1);
    close(fd);
}

TEST(OutputChannel, PumpPublishesOnlyWhileARequestRuns)
{
    iopub_gate gate;
    recorder published;
    output_channel channel(gate, published.publisher(), 5ms);
    std::thread([&] { channel.write("stdout", "from a thread\n"); }).join();
    std::this_thread::sleep_for(50ms);
    // The pump thread may not publish outside a request.
    EXPECT_TRUE(published.text_of("stdout").empty());
    gate.open();
    for (int i = 0; i < 400 && published.text_of("stdout").empty(); ++i)
    {
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(published.text_of("stdout"), "from a thread\n");
    gate.close();
}
