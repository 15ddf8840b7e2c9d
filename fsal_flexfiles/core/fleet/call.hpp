// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Call: one request to a data server (private to ff_fleet), where two files meet. Each
// NFSv3 procedure (nfs3_calls.cpp) implements the virtual part: how to check, build and
// send its request and read its reply. The event loop (event_loop.cpp) owns the Call from
// submit() to maybe_delete() and keeps its place in the queues in the fields below.
#pragma once

#include "fleet/data_server.hpp"
#include "fleet/ds_types.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct rpc_context; // libnfs's: only the .cpp files that drive libnfs include its headers

namespace flexfiles::fleet {

enum class Step { done, again };

// What issue() returns for a WRITE whose caller closed its WriteSource before it was
// encoded: the caller stopped waiting and its bytes are gone, so it is not sent.
constexpr int kIssueWithdrawn = -2;

// Why issue() returned `rc`, for the call's error (nfs3_calls.cpp).
std::string issue_failure(int rc, rpc_context* rpc);

struct Call {
    explicit Call(const char* op_name) : op(op_name) {}
    virtual ~Call() = default;

    // Empty when the arguments are fine; checked on the caller's thread.
    virtual std::string check(const DataServer::Impl&) const { return {}; }
    // Queues the current step with libnfs; non-zero when libnfs refused it (or
    // kIssueWithdrawn).
    virtual int issue(DataServer::Impl& ds, rpc_context* rpc) = 0;
    // A reply to the current step arrived; `again` re-issues (next step of a chain).
    virtual Step on_reply(DataServer::Impl& ds, void* data) = 0;
    virtual void fail(DataServer::Impl& ds, DsStatus st) = 0;
    // Names the object in messages ("fh 01ab..", "name ff-...").
    virtual std::string object() const { return {}; }
    // NULL's reply has no body (libnfs passes no data).
    virtual bool void_reply() const { return false; }
    // The file a WRITE or SETATTR changes: such a call is never sent while an earlier one
    // on the same file is unanswered after its deadline (see "Ordering" in README.md).
    virtual const DsFh* mutated_fh() const { return nullptr; }

    const char* op;
    DataServer::Impl* ds = nullptr;
    Deadline deadline{};
    Clock::time_point submitted{};
    Clock::time_point sent{};
    std::multimap<Deadline, Call*>::iterator dl_it{};
    bool indexed = false;    // in Impl::deadlines
    bool in_libnfs = false;  // libnfs holds the pointer (its callback will come)
    bool queued = false;     // in Impl::waiting or Impl::ready
    bool finished = false;   // the caller has its result
    bool probe = false;      // internal health probe (not counted as a request)
    bool held = false;       // in Impl::held, behind an unanswered change of its file
    bool unanswered = false; // timed out after it was sent; no reply or reset since
    // Sent and awaited on a caller's thread (direct_write.cpp), not by the event loop;
    // cleared when a call that timed out there is handed over to the event thread.
    bool direct = false;
    rpc_context* sent_on = nullptr;
};

// A NULL call (the probe's); the other procedures are made only by their DataServer
// methods, in nfs3_calls.cpp.
std::unique_ptr<Call> make_null_call(const char* op_name, Callback<NullResult> cb);
// A WRITE of `length` bytes at `at` of `source`, for the direct path (direct_write.cpp).
std::unique_ptr<Call> make_write_call(Callback<WriteResult> cb, const DsFh& fh,
                                      std::uint64_t offset, std::shared_ptr<WriteSource> source,
                                      std::size_t at, std::size_t length, StableHow stable);
// libnfs's answer to a call with `direct` set, on the thread that services its connection
// (direct_write.cpp).
void on_direct_reply(Call* c, int status, void* data);

} // namespace flexfiles::fleet
