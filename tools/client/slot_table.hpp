// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The client side of an NFSv4.1 session's fore-channel slot table (RFC 8881 2.10.6).
//
// acquire() hands out the lowest free usable slot, blocking while all are busy. A slot's
// sequence id advances only when the server processed SEQUENCE on it; a slot whose
// outcome is unknown (the call timed out or the connection dropped) is retired, since
// its next sequence id cannot be known. The server's target_highest_slotid shrinks or
// regrows the usable range.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace flexfiles::client {

class SlotTable {
public:
    explicit SlotTable(uint32_t slots);

    struct Lease {
        uint32_t slot;
        uint32_t seqid;          // sa_sequenceid to send
        uint32_t highest_slotid; // sa_highest_slotid to send
    };

    // Empty if no slot became free before `deadline` or none is usable.
    std::optional<Lease> acquire(std::chrono::steady_clock::time_point deadline);

    enum class Outcome {
        processed,     // SEQUENCE succeeded: the slot's seqid advances
        not_processed, // SEQUENCE failed with an error: the seqid stays
        unknown,       // no reply: retire the slot
    };
    void release(uint32_t slot, Outcome outcome, std::optional<uint32_t> target_highest = {});

    uint32_t size() const { return static_cast<uint32_t>(slots_.size()); }
    uint32_t usable() const;
    uint32_t retired() const;

private:
    struct Slot {
        uint32_t seqid = 1; // next sa_sequenceid (a fresh slot starts at 1)
        bool busy = false;
        bool retired = false;
    };
    uint32_t highest_busy_locked() const;

    mutable std::mutex mu_;
    std::condition_variable freed_;
    std::vector<Slot> slots_;
    uint32_t target_highest_;
};

} // namespace flexfiles::client
