// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The WCC attribute cache. The rules are described at the top of attr_cache.h; this file
// follows them in the same order: records and snapshots, the per-record ordering and
// authority rule (apply_to_record), the merge, then the publishing loop and the public API.

// Inline urcu's read-side fast path (licence-compatible: we are LGPL too).
#define _LGPL_SOURCE
#include "attr_cache.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <mutex>
#include <new>
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

namespace flexfiles::wcc {

namespace {

constexpr std::int64_t kNsPerSec = 1'000'000'000;
constexpr DataFileSlot kBarrierSlot{0xFFFF, 0xFFFF};

// Record flags.
constexpr std::uint8_t kPastBarrier = 1u << 0; // ctime accepted after the last barrier
constexpr std::uint8_t kUnordered = 1u << 1;   // SETATTR(size) with unknown truncate ctime
constexpr std::uint8_t kHasFloor = 1u << 2;    // floor is meaningful
constexpr std::uint8_t kGrowOnly = 1u << 3;    // barrier record: size is a lower bound

// Process-wide reclamation counters (the rcu callback has no cache to report to).
std::atomic<std::uint64_t> g_snapshots_retired{0};
std::atomic<std::uint64_t> g_snapshots_freed{0};

} // namespace

// ---------------------------------------------------------------------------------------
// Records and snapshots

struct AttrCache::Record {
    DsAttrs attrs;
    std::int64_t learned_ns = 0;
    NfsTime floor; // reports with ctime <= floor predate the barrier (kHasFloor)
    DataFileSlot slot;
    Source source = Source::None;
    std::uint8_t flags = 0;
};
using Record = AttrCache::Record;
static_assert(sizeof(Record) == 80, "keep the per-data-file record small");
static_assert(std::is_trivially_copyable_v<Record>);

// One file: a hash-table node that is also the immutable snapshot of the file's records.
// Updates never write to a published node: they build a new one and swap it in with
// cds_lfht_replace, which fails if another writer replaced (or removed) it first. A reader
// thus chases two pointers (bucket, node), not three.
// Layout: header, [barrier record], data-file records by slot.
struct AttrCache::Node {
    cds_lfht_node ht_node; // first: the table hands back a pointer to it
    rcu_head rcu;          // used once the node has left the table
    FileId file = 0;
    std::uint32_t count = 0; // data-file records
    std::uint8_t has_barrier = 0;
    std::uint8_t pool_class = 0; // NodePool size class, or kNotPooled

    Record* base() {
        return reinterpret_cast<Record*>(reinterpret_cast<char*>(this) + sizeof(*this));
    }
    const Record* base() const {
        return reinterpret_cast<const Record*>(reinterpret_cast<const char*>(this) + sizeof(*this));
    }
    const Record* barrier() const { return has_barrier ? base() : nullptr; }
    std::span<const Record> files() const { return {base() + has_barrier, count}; }
    const Record* find(DataFileSlot slot) const {
        for (const Record& r : files()) {
            if (r.slot == slot) {
                return &r;
            }
        }
        return nullptr;
    }
};
static_assert(std::is_standard_layout_v<AttrCache::Node>);
static_assert(sizeof(AttrCache::Node) == 48, "header + 80 bytes per record");
static_assert(sizeof(AttrCache::Node) % alignof(Record) == 0);

namespace {

using Node = AttrCache::Node;

// Node memory is recycled. A replaced node becomes reusable after a grace period: the
// call_rcu callback returns it to a pool for its size, and writers take their next node
// from there. Measured reason: with malloc/free, the call_rcu thread freeing what writers
// allocate made them contend for glibc's arena lock (futex syscalls) and walk cold free
// lists, a third of an update's time. Small nodes only (up to kPooledRecords records, a
// file with up to 3 mirrors plus its barrier); the pool keeps at most kPoolCap nodes per
// size, beyond that nodes go back to free().
constexpr std::size_t kPooledRecords = 4;
constexpr std::uint8_t kNotPooled = 0xFF;
constexpr std::size_t kPoolCap = 8192;

constexpr std::size_t node_bytes(std::size_t records) {
    return sizeof(Node) + records * sizeof(Record);
}

// A pooled node's memory while it is free: a link in a Treiber stack (push by CAS, take
// the whole stack by exchange: neither can suffer ABA, there is no single pop).
struct FreeNode {
    FreeNode* next;
};

struct alignas(64) SharedPool {
    std::atomic<FreeNode*> head{nullptr};
    std::atomic<std::size_t> pooled{0}; // nodes in this pool and in threads' local lists
};
std::array<SharedPool, kPooledRecords> g_pools;

// Each writer thread takes a whole stack at a time and uses it from here, without atomics.
struct LocalPools {
    std::array<FreeNode*, kPooledRecords> head{};
    LocalPools() = default;
    ~LocalPools() {
        for (std::size_t c = 0; c < kPooledRecords; ++c) {
            while (FreeNode* f = head[c]) {
                head[c] = f->next;
                g_pools[c].pooled.fetch_sub(1, std::memory_order_relaxed);
                std::free(f);
            }
        }
    }
    LocalPools(const LocalPools&) = delete;
    LocalPools& operator=(const LocalPools&) = delete;
};

LocalPools& local_pools() {
    thread_local LocalPools pools;
    return pools;
}

void* take_pooled(std::size_t cls) {
    LocalPools& local = local_pools();
    FreeNode* f = local.head[cls];
    if (f == nullptr) {
        f = g_pools[cls].head.exchange(nullptr, std::memory_order_acquire);
        if (f == nullptr) {
            return std::malloc(node_bytes(cls + 1));
        }
    }
    local.head[cls] = f->next;
    g_pools[cls].pooled.fetch_sub(1, std::memory_order_relaxed);
    return f;
}

// A node no reader can see any more (after a grace period, or never published).
void recycle(Node* n) {
    const std::uint8_t cls = n->pool_class;
    if (cls == kNotPooled || g_pools[cls].pooled.load(std::memory_order_relaxed) >= kPoolCap) {
        std::free(n);
        return;
    }
    SharedPool& pool = g_pools[cls];
    pool.pooled.fetch_add(1, std::memory_order_relaxed);
    auto* f = new (static_cast<void*>(n)) FreeNode{pool.head.load(std::memory_order_relaxed)};
    while (!pool.head.compare_exchange_weak(f->next, f, std::memory_order_release,
                                            std::memory_order_relaxed)) {
    }
}

Node* make_node(FileId file, const Record* barrier, std::span<const Record> files) {
    const std::size_t n = files.size() + (barrier ? 1 : 0);
    const bool pooled = n >= 1 && n <= kPooledRecords;
    void* mem = pooled ? take_pooled(n - 1) : std::malloc(node_bytes(n));
    if (mem == nullptr) {
        return nullptr;
    }
    auto* node = new (mem) Node{};
    cds_lfht_node_init(&node->ht_node);
    node->file = file;
    node->count = static_cast<std::uint32_t>(files.size());
    node->has_barrier = barrier ? 1 : 0;
    node->pool_class = pooled ? static_cast<std::uint8_t>(n - 1) : kNotPooled;
    Record* out = node->base();
    if (barrier) {
        std::memcpy(static_cast<void*>(out++), barrier, sizeof(Record));
    }
    if (!files.empty()) {
        std::memcpy(static_cast<void*>(out), files.data(), files.size() * sizeof(Record));
    }
    return node;
}

void free_node_rcu(rcu_head* head) {
    recycle(caa_container_of(head, Node, rcu));
    g_snapshots_freed.fetch_add(1, std::memory_order_relaxed);
}

// The node has left the table (replaced or removed): recycle it after a grace period.
void retire(Node* n) {
    g_snapshots_retired.fetch_add(1, std::memory_order_relaxed);
    call_rcu(&n->rcu, free_node_rcu);
}

// splitmix64's finaliser: file ids are often sequential, the table wants spread bits.
unsigned long hash_file(FileId f) {
    std::uint64_t x = f + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return static_cast<unsigned long>(x ^ (x >> 31));
}

int match_file(cds_lfht_node* node, const void* key) {
    return reinterpret_cast<const Node*>(node)->file == *static_cast<const FileId*>(key);
}

Node* node_at(cds_lfht_iter* it) {
    return reinterpret_cast<Node*>(cds_lfht_iter_get_node(it));
}

// rcu_read_lock / unlock as a scope. urcu-bp registers the thread on first use.
class ReadSection {
public:
    ReadSection() { rcu_read_lock(); }
    ~ReadSection() {
        if (held_) {
            rcu_read_unlock();
        }
    }
    void unlock() {
        rcu_read_unlock();
        held_ = false;
    }
    ReadSection(const ReadSection&) = delete;
    ReadSection& operator=(const ReadSection&) = delete;

private:
    bool held_ = true;
};

bool valid_slot(DataFileSlot s) {
    return s.mirror <= kMaxIndex && s.data_server <= kMaxIndex;
}

// ---------------------------------------------------------------------------------------
// The rule for one report against one data file's record (see attr_cache.h).

struct ApplyRules {
    std::uint16_t authority; // AttrBits this source may set
    Source source;
    bool from_client;          // atime only moves forward; LAYOUT_WCC
    bool issued_after_barrier; // an MDS GETATTR sent strictly after the last barrier
};

Outcome apply_to_record(Record& rec, bool have_barrier, const DsAttrs& r, const ApplyRules& rules,
                        std::int64_t now_ns, std::uint32_t& dropped) {
    dropped = 0;
    if (!r.has(kAttrCtime)) {
        return Outcome::IgnoredInvalid;
    }
    const bool cached_ctime = rec.attrs.has(kAttrCtime);
    if (cached_ctime && r.ctime < rec.attrs.ctime) {
        return Outcome::IgnoredStale;
    }
    if (!rules.issued_after_barrier) {
        if (rec.flags & kUnordered) {
            return Outcome::IgnoredStale;
        }
        if ((rec.flags & kHasFloor) && r.ctime <= rec.floor) {
            return Outcome::IgnoredStale; // ties go to the barrier
        }
    }
    const std::uint16_t offered = r.valid & kAttrsAll;
    const std::uint16_t allowed = offered & rules.authority;
    dropped = static_cast<std::uint32_t>(std::popcount(static_cast<unsigned>(offered & ~allowed)));
    if (allowed == 0) {
        return Outcome::IgnoredUnauthorised;
    }
    const bool tie = cached_ctime && r.ctime == rec.attrs.ctime;
    DsAttrs& a = rec.attrs;
    if (allowed & kAttrSize) {
        a.size = r.size;
    }
    if (allowed & kAttrSpaceUsed) {
        a.space_used = r.space_used;
    }
    if (allowed & kAttrMode) {
        a.mode = r.mode;
    }
    if (allowed & kAttrOwner) {
        a.uid = r.uid;
    }
    if (allowed & kAttrGroup) {
        a.gid = r.gid;
    }
    if (allowed & kAttrMtime) {
        a.mtime = r.mtime;
    }
    if (allowed & kAttrAtime) {
        // A client's atime, or anyone's on a ctime tie, only moves forward: reads change
        // atime without changing ctime, so arrival order says nothing about it.
        const bool replace = !a.has(kAttrAtime) || (!rules.from_client && !tie);
        a.atime = replace ? r.atime : std::max(a.atime, r.atime);
    }
    if (allowed & kAttrCtime) {
        a.ctime = r.ctime;
        // The record's ctime-ordered state is now as new as this report.
        rec.source = rules.source;
        rec.learned_ns = now_ns;
        if (have_barrier) {
            rec.flags |= kPastBarrier;
        }
        if (rules.issued_after_barrier) {
            rec.flags &= static_cast<std::uint8_t>(~kUnordered);
        }
    }
    a.valid |= allowed;
    return dropped ? Outcome::AppliedPartly : Outcome::Applied;
}

// ---------------------------------------------------------------------------------------
// The merged view (see attr_cache.h)

bool fresher(const Record& a, const Record& b) {
    if (a.attrs.ctime != b.attrs.ctime) {
        return a.attrs.ctime > b.attrs.ctime;
    }
    return a.learned_ns > b.learned_ns; // equal too: the earlier (lower) slot stays
}

MergedAttrs merge_records(const Record* barrier, std::span<const Record> files) {
    MergedAttrs m;
    DsAttrs& out = m.attrs;
    const Record* best_past = nullptr; // freshest that competes with the barrier
    const Record* best_any = nullptr;  // freshest at all
    std::int64_t oldest = std::numeric_limits<std::int64_t>::max();
    bool never_learned = false;
    for (const Record& r : files) {
        if (r.attrs.has(kAttrSpaceUsed)) {
            out.space_used += r.attrs.space_used;
            m.space_used_known++;
        }
        if (r.attrs.has(kAttrAtime)) {
            out.atime = out.has(kAttrAtime) ? std::max(out.atime, r.attrs.atime) : r.attrs.atime;
            out.valid |= kAttrAtime;
        }
        if (r.learned_ns == 0) {
            never_learned = true;
        } else {
            oldest = std::min(oldest, r.learned_ns);
        }
        if (!r.attrs.has(kAttrCtime)) {
            continue;
        }
        if (best_any == nullptr || fresher(r, *best_any)) {
            best_any = &r;
        }
        if ((barrier == nullptr || (r.flags & kPastBarrier)) &&
            (best_past == nullptr || fresher(r, *best_past))) {
            best_past = &r;
        }
    }
    m.data_files = static_cast<std::uint32_t>(files.size());
    if (m.space_used_known) {
        out.valid |= kAttrSpaceUsed;
    }
    m.oldest_learned_ns = (never_learned || files.empty()) ? 0 : oldest;

    auto take = [&out](const Record& r, std::uint16_t bits) {
        const std::uint16_t have = r.attrs.valid & bits;
        if (have & kAttrSize) {
            out.size = r.attrs.size;
        }
        if (have & kAttrMtime) {
            out.mtime = r.attrs.mtime;
        }
        if (have & kAttrCtime) {
            out.ctime = r.attrs.ctime;
        }
        out.valid |= have;
    };
    if (best_past) {
        take(*best_past, kAttrSize | kAttrMtime | kAttrCtime);
        m.size_source = best_past->source;
        m.learned_ns = best_past->learned_ns;
        // A LAYOUTCOMMIT's size is a floor; any barrier's size stands in for a missing one.
        if (barrier && barrier->attrs.has(kAttrSize) &&
            (!out.has(kAttrSize) ||
             ((barrier->flags & kGrowOnly) && barrier->attrs.size > out.size))) {
            out.size = barrier->attrs.size;
            out.valid |= kAttrSize;
            m.size_source = barrier->source;
        }
    } else if (barrier) {
        take(*barrier, kAttrSize | kAttrMtime);
        if (best_any) {
            take(*best_any,
                 static_cast<std::uint16_t>(kAttrCtime | (out.has(kAttrMtime) ? 0 : kAttrMtime)));
        }
        m.size_source = barrier->source;
        m.learned_ns = barrier->learned_ns;
    }
    return m;
}

DataFileAttrs to_public(FileId file, const Record& r) {
    DataFileAttrs d;
    d.key = DataFileKey{file, r.slot};
    d.attrs = r.attrs;
    d.source = r.source;
    d.learned_ns = r.learned_ns;
    d.past_barrier = (r.flags & kPastBarrier) != 0;
    d.unordered = (r.flags & kUnordered) != 0;
    return d;
}

CredCheck compare_creds(const DsAttrs& a, const FencingCreds& e) {
    if (!a.has(kAttrOwner | kAttrGroup) || (e.mode && !a.has(kAttrMode))) {
        return CredCheck::Unknown;
    }
    const bool same =
        a.uid == e.uid && a.gid == e.gid && (!e.mode || (a.mode & 07777u) == (*e.mode & 07777u));
    return same ? CredCheck::Match : CredCheck::Mismatch;
}

} // namespace

// ---------------------------------------------------------------------------------------
// Counters: one stripe per thread, written only by that thread.
//
// An atomic read-modify-write is a locked instruction on x86 and a locked instruction is a
// full barrier: with "hits" bumped by fetch_add, no lookup could start its cache misses
// before the previous one finished (measured: 1M-file lookups 2x slower back to back).
// So each thread owns a stripe (in every cache) and bumps it with a plain load and store.
// Threads beyond kOwnedStripes share one extra stripe with atomic adds. Ownership passes
// between threads under a mutex, so a new owner starts from its predecessor's totals.

enum Counter : std::size_t {
    kOps,
    kApplied,
    kUnmatched,
    kStale,
    kUnauthorised,
    kInvalid,
    kAttrsUnauthorised,
    kCredChecks,
    kCredMismatches,
    kHits,
    kMisses,
    kGetattrApplied,
    kGetattrStale,
    kLayoutcommits,
    kMdsSetattrs,
    kRetries,
    kAllocFailures,
    kNumCounters
};

namespace {

constexpr std::size_t kOwnedStripes = 64;
constexpr std::size_t kSharedStripe = kOwnedStripes; // threads without a stripe of their own

class StripeRegistry {
public:
    std::size_t acquire() {
        std::lock_guard lock(mu_);
        for (std::size_t i = 0; i < kOwnedStripes; ++i) {
            if (!taken_[i]) {
                taken_[i] = true;
                return i;
            }
        }
        return kSharedStripe;
    }
    void release(std::size_t i) {
        if (i < kOwnedStripes) {
            std::lock_guard lock(mu_);
            taken_[i] = false;
        }
    }

private:
    std::mutex mu_;
    std::array<bool, kOwnedStripes> taken_{};
};

StripeRegistry& stripe_registry() {
    static StripeRegistry* r = new StripeRegistry; // outlives every thread_local below
    return *r;
}

struct ThreadStripe {
    std::size_t index = stripe_registry().acquire();
    ThreadStripe() = default;
    ~ThreadStripe() { stripe_registry().release(index); }
    ThreadStripe(const ThreadStripe&) = delete;
    ThreadStripe& operator=(const ThreadStripe&) = delete;
};

std::size_t stripe_of_this_thread() {
    thread_local const ThreadStripe mine;
    return mine.index;
}

} // namespace

struct AttrCache::Counters {
    struct alignas(64) Stripe {
        std::array<std::atomic<std::uint64_t>, kNumCounters> v{};
    };
    std::array<Stripe, kOwnedStripes + 1> stripes;
    std::atomic<std::int64_t> files{0};

    void add(Counter c, std::uint64_t n = 1) {
        if (n == 0) {
            return;
        }
        const std::size_t i = stripe_of_this_thread();
        std::atomic<std::uint64_t>& v = stripes[i].v[c];
        if (i == kSharedStripe) {
            v.fetch_add(n, std::memory_order_relaxed);
        } else {
            v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        }
    }
    std::uint64_t sum(Counter c) const {
        std::uint64_t s = 0;
        for (const Stripe& st : stripes) {
            s += st.v[c].load(std::memory_order_relaxed);
        }
        return s;
    }
};

// ---------------------------------------------------------------------------------------
// Drafts: a writable copy of a snapshot. The scratch vector is per thread and reused, so a
// steady-state update allocates only the snapshot it publishes.

struct AttrCache::Draft {
    std::optional<Record> barrier;
    std::vector<Record>& files;

    Draft(const Node* s, std::vector<Record>& scratch) : files(scratch) {
        files.clear();
        if (s) {
            if (const Record* b = s->barrier()) {
                barrier = *b;
            }
            const auto f = s->files();
            files.assign(f.begin(), f.end());
        }
    }
    Record* find(DataFileSlot slot) {
        for (Record& r : files) {
            if (r.slot == slot) {
                return &r;
            }
        }
        return nullptr;
    }
    void insert(const Record& r) {
        auto at = std::find_if(files.begin(), files.end(),
                               [&](const Record& x) { return r.slot < x.slot; });
        files.insert(at, r);
    }
    MergedAttrs merged() const {
        return merge_records(barrier ? &*barrier : nullptr, {files.data(), files.size()});
    }
};

enum class AttrCache::Published : std::uint8_t { Yes, Unchanged, OutOfMemory };

// ---------------------------------------------------------------------------------------
// AttrCache

std::int64_t monotonic_now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

std::optional<NfsTime> NfsTime::from_parts(std::int64_t seconds, std::uint32_t nseconds) {
    if (nseconds >= kNsPerSec) {
        return std::nullopt;
    }
    std::int64_t ns = 0;
    if (__builtin_mul_overflow(seconds, kNsPerSec, &ns) ||
        __builtin_add_overflow(ns, static_cast<std::int64_t>(nseconds), &ns)) {
        return std::nullopt;
    }
    return NfsTime{ns};
}

std::int64_t NfsTime::seconds() const {
    const std::int64_t s = ns / kNsPerSec;
    return (ns % kNsPerSec < 0) ? s - 1 : s;
}

std::uint32_t NfsTime::nseconds() const {
    const std::int64_t r = ns % kNsPerSec;
    return static_cast<std::uint32_t>(r < 0 ? r + kNsPerSec : r);
}

std::int64_t DataFileAttrs::age_ns(std::int64_t now_ns) const {
    return learned_ns == 0 ? std::numeric_limits<std::int64_t>::max() : now_ns - learned_ns;
}

bool MergedAttrs::older_than(std::int64_t max_age_ns, std::int64_t now_ns) const {
    return learned_ns == 0 || now_ns - learned_ns > max_age_ns;
}

const char* to_string(Source s) {
    switch (s) {
    case Source::None:
        return "none";
    case Source::Wcc:
        return "wcc";
    case Source::DsGetattr:
        return "ds_getattr";
    case Source::LayoutCommit:
        return "layoutcommit";
    case Source::MdsWrite:
        return "mds_write";
    }
    return "?";
}

const char* to_string(Outcome o) {
    switch (o) {
    case Outcome::Applied:
        return "applied";
    case Outcome::AppliedPartly:
        return "applied_partly";
    case Outcome::IgnoredStale:
        return "ignored_stale";
    case Outcome::IgnoredUnauthorised:
        return "ignored_unauthorised";
    case Outcome::IgnoredUnmatched:
        return "ignored_unmatched";
    case Outcome::IgnoredInvalid:
        return "ignored_invalid";
    case Outcome::OutOfMemory:
        return "out_of_memory";
    }
    return "?";
}

const char* to_string(CredCheck c) {
    switch (c) {
    case CredCheck::Match:
        return "match";
    case CredCheck::Mismatch:
        return "mismatch";
    case CredCheck::Unknown:
        return "unknown";
    }
    return "?";
}

AttrCache::AttrCache(std::size_t expected_files) : counters_(std::make_unique<Counters>()) {
    // Buckets for expected_files up front, and never fewer: growth beyond that is automatic
    // but asynchronous (a resize walks every node), so a well-sized cache never waits on it.
    const unsigned long init = std::bit_ceil(std::clamp<std::size_t>(expected_files, 1, 1ul << 30));
    table_ = cds_lfht_new(init, init, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, nullptr);
    if (table_ == nullptr) {
        throw std::bad_alloc();
    }
}

AttrCache::~AttrCache() {
    std::vector<Node*> nodes;
    {
        ReadSection rs;
        cds_lfht_iter it;
        cds_lfht_first(table_, &it);
        for (cds_lfht_node* n; (n = cds_lfht_iter_get_node(&it)) != nullptr;
             cds_lfht_next(table_, &it)) {
            if (cds_lfht_del(table_, n) == 0) {
                nodes.push_back(reinterpret_cast<Node*>(n));
            }
        }
    }
    synchronize_rcu();
    for (Node* n : nodes) {
        std::free(n); // pooled or not, every node is malloc'd memory
    }
    cds_lfht_destroy(table_, nullptr);
}

void AttrCache::wait_for_reclaim() {
    rcu_barrier();
}

AttrCache::Node* AttrCache::find_node(FileId file) const {
    cds_lfht_iter it;
    cds_lfht_lookup(table_, hash_file(file), match_file, &file, &it);
    return node_at(&it);
}

namespace {
std::vector<AttrCache::Record>& thread_scratch() {
    thread_local std::vector<AttrCache::Record> scratch;
    return scratch;
}
} // namespace

// Copy the file's node into a draft, let edit() change it (it returns whether anything
// changed), publish the result as a new node. Lock-free: a lost race (the node was
// replaced or removed under us) frees the unpublished copy and edits the winner again, so
// edit() must start from the draft every time.
template <class Edit> AttrCache::Published AttrCache::publish(FileId file, Edit&& edit) {
    std::vector<Record>& scratch = thread_scratch();
    const unsigned long hash = hash_file(file);
    for (;;) {
        ReadSection rs;
        cds_lfht_iter it;
        cds_lfht_lookup(table_, hash, match_file, &file, &it);
        Node* old = node_at(&it);
        Draft draft(old, scratch);
        if (!edit(draft)) {
            return Published::Unchanged; // edit() reported its outcomes
        }
        Node* fresh = make_node(file, draft.barrier ? &*draft.barrier : nullptr,
                                {draft.files.data(), draft.files.size()});
        if (fresh == nullptr) {
            counters_->add(kAllocFailures);
            return Published::OutOfMemory;
        }
        if (old == nullptr) {
            if (cds_lfht_add_unique(table_, hash, match_file, &file, &fresh->ht_node) ==
                &fresh->ht_node) {
                counters_->files.fetch_add(1, std::memory_order_relaxed);
                return Published::Yes;
            }
        } else if (cds_lfht_replace(table_, &it, hash, match_file, &file, &fresh->ht_node) == 0) {
            rs.unlock();
            retire(old);
            return Published::Yes;
        }
        recycle(fresh); // never published
        counters_->add(kRetries);
    }
}

WccResult AttrCache::apply_wcc(FileId file, Iomode iomode, std::span<const WccReport> reports,
                               std::span<Outcome> per_entry, std::int64_t now_ns) {
    const std::uint16_t authority = iomode == Iomode::ReadWrite ? kAttrsAll
                                    : iomode == Iomode::Read    ? kAttrsReadAuthority
                                                                : 0;
    const ApplyRules rules{authority, Source::Wcc, true, false};
    const bool want_outcomes = per_entry.size() == reports.size();
    WccResult res;
    auto edit = [&](Draft& d) {
        res = WccResult{};
        bool changed = false;
        for (std::size_t i = 0; i < reports.size(); ++i) {
            const WccReport& rep = reports[i];
            Outcome o;
            std::uint32_t dropped = 0;
            if (!rep.slot) {
                o = Outcome::IgnoredUnmatched;
            } else if (!valid_slot(*rep.slot) || !rep.attrs.has(kAttrCtime)) {
                o = Outcome::IgnoredInvalid;
            } else {
                Record* rec = d.find(*rep.slot);
                Record fresh{};
                fresh.slot = *rep.slot;
                o = apply_to_record(rec ? *rec : fresh, d.barrier.has_value(), rep.attrs, rules,
                                    now_ns, dropped);
                const bool applied = o == Outcome::Applied || o == Outcome::AppliedPartly;
                if (applied && rec == nullptr) {
                    d.insert(fresh);
                }
                changed |= applied;
            }
            res.attrs_unauthorised += dropped;
            switch (o) {
            case Outcome::Applied:
            case Outcome::AppliedPartly:
                res.applied++;
                break;
            case Outcome::IgnoredStale:
                res.ignored_stale++;
                break;
            case Outcome::IgnoredUnauthorised:
                res.ignored_unauthorised++;
                break;
            case Outcome::IgnoredUnmatched:
                res.ignored_unmatched++;
                break;
            default:
                res.ignored_invalid++;
                break;
            }
            if (want_outcomes) {
                per_entry[i] = o;
            }
        }
        return changed;
    };
    if (publish(file, edit) == Published::OutOfMemory) {
        res = WccResult{};
        res.out_of_memory = true;
        if (want_outcomes) {
            std::fill(per_entry.begin(), per_entry.end(), Outcome::OutOfMemory);
        }
    }
    Counters& c = *counters_;
    c.add(kOps);
    c.add(kApplied, res.applied);
    c.add(kStale, res.ignored_stale);
    c.add(kUnauthorised, res.ignored_unauthorised);
    c.add(kUnmatched, res.ignored_unmatched);
    c.add(kInvalid, res.ignored_invalid);
    c.add(kAttrsUnauthorised, res.attrs_unauthorised);
    return res;
}

Outcome AttrCache::apply_ds_getattr(const DataFileKey& key, const DsAttrs& attrs,
                                    std::int64_t issued_ns, std::int64_t now_ns) {
    if (!valid_slot(key.slot) || !attrs.has(kAttrCtime)) {
        return Outcome::IgnoredInvalid;
    }
    Outcome result = Outcome::IgnoredInvalid;
    auto edit = [&](Draft& d) {
        const bool after = d.barrier && issued_ns > d.barrier->learned_ns;
        const ApplyRules rules{kAttrsAll, Source::DsGetattr, false, after};
        Record* rec = d.find(key.slot);
        Record fresh{};
        fresh.slot = key.slot;
        std::uint32_t dropped = 0;
        result = apply_to_record(rec ? *rec : fresh, d.barrier.has_value(), attrs, rules, now_ns,
                                 dropped);
        const bool applied = result == Outcome::Applied;
        if (applied && rec == nullptr) {
            d.insert(fresh);
        }
        return applied;
    };
    if (publish(key.file, edit) == Published::OutOfMemory) {
        return Outcome::OutOfMemory;
    }
    counters_->add(result == Outcome::Applied ? kGetattrApplied : kGetattrStale);
    return result;
}

Outcome AttrCache::record_layoutcommit(FileId file, std::optional<std::uint64_t> new_size,
                                       std::optional<NfsTime> mtime, std::int64_t now_ns) {
    auto edit = [&](Draft& d) {
        const MergedAttrs now = d.merged();
        Record b{};
        b.slot = kBarrierSlot;
        b.source = Source::LayoutCommit;
        b.learned_ns = now_ns;
        b.flags = kGrowOnly;
        // RFC 8881 18.42.3: the new size is max(current size, last_write_offset + 1).
        if (new_size || now.attrs.has(kAttrSize)) {
            b.attrs.size =
                std::max(new_size.value_or(0), now.attrs.has(kAttrSize) ? now.attrs.size : 0);
            b.attrs.valid |= kAttrSize;
        }
        if (mtime) {
            b.attrs.mtime = *mtime;
            b.attrs.valid |= kAttrMtime;
        }
        for (Record& r : d.files) {
            if (r.attrs.has(kAttrCtime) && (!(r.flags & kHasFloor) || r.attrs.ctime > r.floor)) {
                r.floor = r.attrs.ctime;
                r.flags |= kHasFloor;
            }
            r.flags &= static_cast<std::uint8_t>(~kPastBarrier);
        }
        d.barrier = b;
        return true;
    };
    if (publish(file, edit) == Published::OutOfMemory) {
        return Outcome::OutOfMemory;
    }
    counters_->add(kLayoutcommits);
    return Outcome::Applied;
}

Outcome AttrCache::record_mds_setattr_size(FileId file, std::uint64_t size,
                                           std::optional<NfsTime> mtime,
                                           std::span<const TruncatedDataFile> truncated,
                                           std::int64_t now_ns) {
    for (const TruncatedDataFile& t : truncated) {
        if (!valid_slot(t.slot)) {
            return Outcome::IgnoredInvalid;
        }
    }
    auto edit = [&](Draft& d) {
        Record b{};
        b.slot = kBarrierSlot;
        b.source = Source::MdsWrite;
        b.learned_ns = now_ns;
        b.attrs.size = size;
        b.attrs.valid = kAttrSize;
        if (mtime) {
            b.attrs.mtime = *mtime;
            b.attrs.valid |= kAttrMtime;
        }
        // Without the truncate's own ctime no floor is safe (a client's report of a write
        // made just before the truncate would pass any older floor): unordered until the
        // data server answers a GETATTR, or the post-op attributes below settle it.
        for (Record& r : d.files) {
            r.flags = static_cast<std::uint8_t>((r.flags & ~kPastBarrier) | kUnordered);
        }
        for (const TruncatedDataFile& t : truncated) {
            Record* rec = d.find(t.slot);
            if (rec == nullptr) {
                Record fresh{};
                fresh.slot = t.slot;
                fresh.flags = kUnordered;
                d.insert(fresh);
                rec = d.find(t.slot);
            }
            if (t.post_op && t.post_op->has(kAttrCtime)) {
                // The data server's own answer for the truncate: full authority, and the
                // floor at exactly its ctime.
                rec->attrs = *t.post_op;
                rec->attrs.valid &= kAttrsAll;
                rec->source = Source::MdsWrite;
                rec->learned_ns = now_ns;
                rec->floor = t.post_op->ctime;
                rec->flags = kHasFloor | kPastBarrier;
            }
        }
        d.barrier = b;
        return true;
    };
    if (publish(file, edit) == Published::OutOfMemory) {
        return Outcome::OutOfMemory;
    }
    counters_->add(kMdsSetattrs);
    return Outcome::Applied;
}

std::optional<DataFileAttrs> AttrCache::lookup(const DataFileKey& key) const {
    {
        ReadSection rs;
        if (const Node* n = find_node(key.file)) {
            if (const Record* r = n->find(key.slot)) {
                DataFileAttrs out = to_public(key.file, *r);
                rs.unlock();
                counters_->add(kHits);
                return out;
            }
        }
    }
    counters_->add(kMisses);
    return std::nullopt;
}

std::optional<MergedAttrs> AttrCache::merged(FileId file) const {
    {
        ReadSection rs;
        if (const Node* n = find_node(file)) {
            MergedAttrs m = merge_records(n->barrier(), n->files());
            rs.unlock();
            counters_->add(kHits);
            return m;
        }
    }
    counters_->add(kMisses);
    return std::nullopt;
}

std::vector<DataFileAttrs> AttrCache::data_files(FileId file) const {
    std::vector<DataFileAttrs> out;
    ReadSection rs;
    if (const Node* n = find_node(file)) {
        out.reserve(n->count);
        for (const Record& r : n->files()) {
            out.push_back(to_public(file, r));
        }
    }
    return out;
}

CredCheck AttrCache::check_credentials(const DataFileKey& key, const FencingCreds& expected) const {
    CredCheck c = CredCheck::Unknown;
    {
        ReadSection rs;
        if (const Node* n = find_node(key.file)) {
            if (const Record* r = n->find(key.slot)) {
                c = compare_creds(r->attrs, expected);
            }
        }
    }
    counters_->add(kCredChecks);
    if (c == CredCheck::Mismatch) {
        counters_->add(kCredMismatches);
    }
    return c;
}

CredCheck AttrCache::check_reported_credentials(const DsAttrs& reported,
                                                const FencingCreds& expected) const {
    const CredCheck c = compare_creds(reported, expected);
    counters_->add(kCredChecks);
    if (c == CredCheck::Mismatch) {
        counters_->add(kCredMismatches);
    }
    return c;
}

void AttrCache::forget(FileId file) {
    for (;;) {
        ReadSection rs;
        Node* n = find_node(file);
        if (n == nullptr) {
            return;
        }
        if (cds_lfht_del(table_, &n->ht_node) == 0) {
            counters_->files.fetch_sub(1, std::memory_order_relaxed);
            rs.unlock();
            retire(n);
            return;
        }
        // A writer replaced the node (or another forget() removed it) first: look again.
    }
}

std::size_t AttrCache::files() const {
    return static_cast<std::size_t>(
        std::max<std::int64_t>(counters_->files.load(std::memory_order_relaxed), 0));
}

CacheStats AttrCache::stats() const {
    const Counters& c = *counters_;
    CacheStats s;
    s.ops = c.sum(kOps);
    s.entries_applied = c.sum(kApplied);
    s.entries_ignored_unmatched = c.sum(kUnmatched);
    s.entries_ignored_stale = c.sum(kStale);
    s.entries_ignored_unauthorised = c.sum(kUnauthorised);
    s.entries_ignored_invalid = c.sum(kInvalid);
    s.attrs_unauthorised = c.sum(kAttrsUnauthorised);
    s.credential_checks = c.sum(kCredChecks);
    s.credential_mismatches = c.sum(kCredMismatches);
    s.hits = c.sum(kHits);
    s.misses = c.sum(kMisses);
    s.ds_getattr_applied = c.sum(kGetattrApplied);
    s.ds_getattr_stale = c.sum(kGetattrStale);
    s.layoutcommits = c.sum(kLayoutcommits);
    s.mds_setattrs = c.sum(kMdsSetattrs);
    s.publish_retries = c.sum(kRetries);
    s.alloc_failures = c.sum(kAllocFailures);
    s.files = files();
    s.snapshots_retired = g_snapshots_retired.load(std::memory_order_relaxed);
    s.snapshots_freed = g_snapshots_freed.load(std::memory_order_relaxed);
    return s;
}

} // namespace flexfiles::wcc
