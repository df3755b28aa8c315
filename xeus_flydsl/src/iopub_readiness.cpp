#include "iopub_readiness.hpp"

#include <fstream>
#include <sstream>
#include <thread>

namespace xflydsl
{

iopub_readiness::iopub_readiness(const std::string& transport, const std::string& port)
{
    if (transport == "tcp")
    {
        try
        {
            m_port = std::stoi(port);
        }
        catch (const std::exception&)
        {
            m_port = 0;
        }
    }
}

// Whether /proc/net/tcp{,6} lists an established connection whose local
// port is IOPub's: only this kernel listens there, so it is a client's.
bool iopub_readiness::connected() const
{
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"})
    {
        std::ifstream in(table);
        std::string line;
        std::getline(in, line); // the header
        while (std::getline(in, line))
        {
            std::istringstream fields(line);
            std::string slot, local, remote, state;
            fields >> slot >> local >> remote >> state;
            const auto colon = local.rfind(':');
            constexpr const char* established = "01";
            if (state == established && colon != std::string::npos &&
                std::stoi(local.substr(colon + 1), nullptr, 16) == m_port)
            {
                return true;
            }
        }
    }
    return false;
}

void iopub_readiness::wait_once(std::chrono::milliseconds limit)
{
    std::call_once(m_once,
                   [&]
                   {
                       if (m_port == 0)
                       {
                           return;
                       }
                       const auto deadline = std::chrono::steady_clock::now() + limit;
                       while (!connected())
                       {
                           if (std::chrono::steady_clock::now() >= deadline)
                           {
                               return;
                           }
                           std::this_thread::sleep_for(std::chrono::milliseconds(2));
                       }
                       // The handshake and the subscription, on xeus's publisher thread.
                       std::this_thread::sleep_for(std::chrono::milliseconds(5));
                   });
}

} // namespace xflydsl
