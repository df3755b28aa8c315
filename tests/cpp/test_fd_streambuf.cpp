#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include <unistd.h>

#include "fd_streambuf.hpp"

TEST(FdStreambuf, WritesEveryCharacterToItsDescriptorAtOnce)
{
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    xflydsl::fd_streambuf buffer(ends[1]);
    std::ostream log(&buffer);
    log << "ERROR: " << 42 << '\n';
    char read_back[64] = {};
    const ssize_t got = ::read(ends[0], read_back, sizeof read_back); // no flush needed: unbuffered
    EXPECT_EQ(std::string(read_back, static_cast<size_t>(got)), "ERROR: 42\n");
    ::close(ends[0]);
    ::close(ends[1]);
}

TEST(FdStreambuf, AClosedDescriptorFailsTheStreamNotTheProcess)
{
    xflydsl::fd_streambuf buffer(-1);
    std::ostream log(&buffer);
    log << "lost";
    EXPECT_TRUE(log.bad());
}
