// Code compiled in this process, by a digest of what it was compiled from: a
// function (or kernel) whose IR did not change since is not compiled again,
// so a helper edit recompiles only the kernels that inline it.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace llvm
{
class Module;
}

namespace flyrt::jit
{

// Compiled code and the digest the memo keeps it under ("": not kept).
struct compiled_part
{
    std::string code;
    std::string digest;
};

// Functions compiled, and reused from an earlier compile, in this process.
struct part_counts
{
    unsigned long compiled = 0;
    unsigned long reused = 0;
};

class part_memo
{
public:
    // The process-wide memo.
    static part_memo& instance();

    // What `key` compiled to before, else what `compile()` makes now, kept
    // for the next time (an empty key: compiled, not kept).
    template <class Compile> compiled_part memoized(const std::string& key, Compile&& compile)
    {
        if (std::optional<std::string> known = key.empty() ? std::nullopt : find(key))
        {
            return {std::move(*known), key};
        }
        std::string code = compile();
        if (!key.empty())
        {
            add(key, code);
        }
        return {std::move(code), key};
    }
    // Code an earlier process compiled (a payload from the disk cache), kept
    // as if compiled here: a later edit recompiles only the parts it changed.
    void remember(const std::string& digest, const std::string& code);
    part_counts counts();

private:
    std::optional<std::string> find(const std::string& key);
    void add(const std::string& key, const std::string& code);

    static constexpr std::size_t capacity = 256;
    std::mutex m_mutex;
    std::unordered_map<std::string, std::string> m_code;
    std::deque<std::string> m_order; // oldest first
    part_counts m_counts;
};

// SHA-256 of a module's text, salted with what else decides its code.
std::string digest_of(const llvm::Module& module, const std::string& salt);

} // namespace flyrt::jit
