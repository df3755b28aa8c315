#include "fd_streambuf.hpp"

#include <cerrno>

#include <unistd.h>

namespace xflydsl
{

fd_streambuf::int_type fd_streambuf::overflow(int_type character)
{
    if (traits_type::eq_int_type(character, traits_type::eof()))
    {
        return traits_type::not_eof(character);
    }
    const char byte = traits_type::to_char_type(character);
    return xsputn(&byte, 1) == 1 ? character : traits_type::eof();
}

std::streamsize fd_streambuf::xsputn(const char* text, std::streamsize count)
{
    std::streamsize written = 0;
    while (written < count)
    {
        const ssize_t done = ::write(m_fd, text + written, static_cast<size_t>(count - written));
        if (done < 0 && errno == EINTR)
        {
            continue;
        }
        if (done <= 0)
        {
            break; // a closed log loses diagnostics, never the kernel
        }
        written += done;
    }
    return written;
}

} // namespace xflydsl
