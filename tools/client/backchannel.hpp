// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The client's side of the NFSv4.1 backchannel (RFC 8881 section 20): answers the
// server's CB_NULL and CB_COMPOUND calls that arrive on the session's connection.
//
// CB_SEQUENCE is checked against the session (id, slot, sequence id; there is no reply
// cache, so a retry gets NFS4ERR_RETRY_UNCACHED_REP) and answered. Every other op goes
// to the installed CallbackOpHandler; without one, CB_LAYOUTRECALL gets
// NFS4ERR_NOMATCHING_LAYOUT (no layouts are held) and anything else NFS4ERR_NOTSUPP.
// Processing stops at the first failed op, as on the fore channel.
#pragma once

#include "nfs4_xdr.hpp"
#include "rpc_transport.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace flexfiles::client {

constexpr uint32_t kCbProgramDefault = 0x40000000; // a transient program number
constexpr uint32_t kCbVersion = 1;                 // RFC 8881 errata 2291
constexpr uint32_t kCbProcNull = 0;
constexpr uint32_t kCbProcCompound = 1;

// Answers one callback op other than CB_SEQUENCE. Runs on the transport's receive
// thread: it must not wait for fore-channel replies (hand such work to another thread).
// Returns the op's status; may fill the rest of `res`.
using CallbackOpHandler = std::function<nfsstat4(const nfs_cb_argop4& op, nfs_cb_resop4& res)>;

class Backchannel {
public:
    using Trace = std::function<void(const std::string&)>;

    explicit Backchannel(uint32_t cb_program, Trace trace = {});

    // The session whose CB_SEQUENCEs are accepted, and its backchannel slot count.
    void bind(const sessionid4& id, uint32_t slots);
    void set_handler(CallbackOpHandler handler);

    // The RpcTransport CallHandler.
    std::optional<RpcCallReply> answer(const RpcCall& call);

    uint64_t answered() const { return answered_.load(); }

private:
    nfsstat4 sequence(const CB_SEQUENCE4args& args, CB_SEQUENCE4resok& ok);
    void trace(const std::string& line) const;

    const uint32_t program_;
    const Trace trace_;
    std::mutex mu_;
    sessionid4 sessionid_{};
    std::vector<uint32_t> slot_seqids_; // last sequence id per slot, 0 = none yet
    CallbackOpHandler handler_;
    std::atomic<uint64_t> answered_{0};
};

} // namespace flexfiles::client
