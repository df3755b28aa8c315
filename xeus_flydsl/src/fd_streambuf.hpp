// A std::streambuf that writes straight to a file descriptor, unbuffered.
// std::cerr is pointed at the descriptor the kernel started with (its log:
// the terminal or the server's log), so the kernel's own diagnostics, xeus's
// included (a forged message's "Signatures don't match"), never reach a
// cell, where fd 2 now leads.
#pragma once

#include <streambuf>

namespace xflydsl
{

class fd_streambuf : public std::streambuf
{
public:
    explicit fd_streambuf(int fd) : m_fd(fd) {}

protected:
    int_type overflow(int_type character) override;
    std::streamsize xsputn(const char* text, std::streamsize count) override;

private:
    int m_fd;
};

} // namespace xflydsl
