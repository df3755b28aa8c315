#include "part_memo.hpp"

#include <llvm/IR/Module.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

namespace flyrt::jit
{

part_memo& part_memo::instance()
{
    static part_memo memo;
    return memo;
}

std::optional<std::string> part_memo::find(const std::string& key)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    auto found = m_code.find(key);
    if (found == m_code.end())
    {
        ++m_counts.compiled;
        return std::nullopt;
    }
    ++m_counts.reused;
    return found->second;
}

void part_memo::add(const std::string& key, const std::string& code)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_code.try_emplace(key, code).second) // the code is copied only when the key is new
    {
        return;
    }
    m_order.push_back(key);
    if (m_order.size() > capacity)
    {
        m_code.erase(m_order.front());
        m_order.pop_front();
    }
}

void part_memo::remember(const std::string& digest, const std::string& code)
{
    if (!digest.empty())
    {
        add(digest, code);
    }
}

part_counts part_memo::counts()
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_counts;
}

std::string digest_of(const llvm::Module& module, const std::string& salt)
{
    std::string text;
    llvm::raw_string_ostream stream(text);
    module.print(stream, nullptr);
    stream.flush();
    llvm::SHA256 sha;
    sha.update(salt);
    sha.update(text);
    const auto digest = sha.final();
    return std::string(digest.begin(), digest.end());
}

} // namespace flyrt::jit
