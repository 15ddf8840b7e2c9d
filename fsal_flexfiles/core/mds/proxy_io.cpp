// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/proxy_io.hpp"

#include "cache/ds_attrs.hpp"
#include "mds/one_shot.hpp"

#include <algorithm>
#include <future>
#include <memory>
#include <optional>

namespace flexfiles::mds {
namespace {

using namespace std::chrono_literals;
using fleet::DsErrc;
using fleet::DsStatus;

constexpr std::uint32_t kNfs3ErrPerm = 1;
constexpr std::uint32_t kNfs3ErrAcces = 13;

// "file 1234 mirror 1 (data file ff-00000000000004d2-m1): " + what the fleet said (which
// names the data server, the operation and the filehandle).
DsStatus in_context(const DataFileMap& map, const DataFile& df, DsStatus st) {
    st.message = "file " + std::to_string(map.file_id) + " mirror " + std::to_string(df.mirror) +
                 " (data file " + df.name + "): " + st.message;
    return st;
}

fleet::ErrorKind error_kind(const DsStatus& st) {
    switch (st.code) {
    case DsErrc::timeout:
        return fleet::ErrorKind::timeout;
    case DsErrc::disconnected:
        return fleet::ErrorKind::disconnected;
    case DsErrc::nfs:
        return st.nfs3 == kNfs3ErrAcces || st.nfs3 == kNfs3ErrPerm ? fleet::ErrorKind::access
                                                                   : fleet::ErrorKind::io;
    default:
        return fleet::ErrorKind::other;
    }
}

// The data server and filehandle of a data file, or why there are none.
struct Target {
    std::shared_ptr<fleet::DataServer> ds;
    fleet::DsFh fh;
    DsStatus status;
};

Target resolve(fleet::Fleet& fleet, const DataFileMap& map, const DataFile& df) {
    Target t;
    t.ds = fleet.find(df.ds_id);
    if (!t.ds) {
        t.status = in_context(
            map, df,
            DsStatus::error(DsErrc::not_found, "data server " + std::to_string(df.ds_id) +
                                                   " is not in this export's configuration"));
        return t;
    }
    if (df.fh.empty()) {
        t.status = in_context(map, df,
                              DsStatus::error(DsErrc::invalid_argument,
                                              "the stored filehandle is empty: not a valid NFSv3 "
                                              "filehandle"));
        return t;
    }
    t.fh = df.fh;
    return t;
}

// The first failure of a set of per-mirror results, after telling each failing data server.
DsStatus first_failure(std::vector<std::pair<Target*, DsStatus>>& results) {
    DsStatus first;
    for (auto& [target, st] : results) {
        if (st.ok())
            continue;
        if (target->ds && st.code != DsErrc::not_found && st.code != DsErrc::invalid_argument)
            target->ds->report_error(error_kind(st));
        if (first.ok())
            first = st;
    }
    return first;
}

// Writes one mirror's whole range, chunk after chunk, as a chain of callbacks on the data
// server's event thread (a short write continues from where the server stopped).
struct WriteChain : std::enable_shared_from_this<WriteChain> {
    std::shared_ptr<fleet::DataServer> ds;
    fleet::DsFh fh;
    std::shared_ptr<fleet::WriteSource> data;
    std::uint64_t offset = 0;
    std::size_t written = 0;
    std::uint32_t chunk = 0;
    fleet::StableHow how = fleet::StableHow::file_sync;
    ExportWriteVerifier* verifier = nullptr; // told every reply's verifier
    std::uint64_t ds_id = 0;
    std::chrono::milliseconds timeout{};
    wcc::AttrCache* cache = nullptr;
    wcc::DataFileKey key;
    fleet::CallTimes last_times; // of the last chunk's request, once answered
    OneShot<DsStatus> done;

    void next() {
        if (written >= data->size()) {
            done.set(DsStatus::success());
            return;
        }
        const std::size_t len = std::min<std::size_t>(chunk, data->size() - written);
        const std::int64_t issued = wcc::monotonic_now_ns();
        auto self = shared_from_this();
        // Every mirror's chunks are views into the client's data, lent by the worker.
        ds->write(fh, offset + written, data, written, len, how, fleet::deadline_in(timeout),
                  [self, issued](fleet::DsResult<fleet::WriteResult> r) {
                      self->answered(std::move(r), issued);
                  });
    }

    // A chunk's answer, from the event thread or the worker's own (the first chunk, sent
    // with DataServer::write_here): records it and goes on with the next chunk.
    void answered(fleet::DsResult<fleet::WriteResult> r, std::int64_t issued) {
        if (!r.ok()) {
            done.set(std::move(r.status));
            return;
        }
        if (r.value.attrs && cache != nullptr)
            cache->apply_ds_getattr(key, to_cache_attrs(*r.value.attrs), issued);
        if (verifier != nullptr)
            verifier->observe(ds_id, r.value.verifier);
        if (r.value.count == 0) {
            done.set(DsStatus::error(DsErrc::rpc, ds->label() + ": WRITE fh " + fh.hex() +
                                                      ": the server wrote 0 bytes"));
            return;
        }
        written += r.value.count;
        last_times = r.value.times;
        next();
    }
};

// Sends the first chunk of every mirror on the worker's own thread where the data servers
// can take it (DataServer::write_here): no hand-off to an event thread and back. Returns
// whether every mirror's first chunk went that way. The chains go on from there (further
// chunks through the event threads); a mirror that could not go this way starts through
// its event thread at once, in parallel with the others.
bool start_on_this_thread(std::vector<std::shared_ptr<WriteChain>>& chains) {
    std::vector<fleet::DirectWrite> direct(chains.size());
    for (std::size_t i = 0; i < chains.size(); ++i) {
        const WriteChain* ch = chains[i].get();
        if (ch == nullptr)
            continue;
        fleet::DirectWrite& w = direct[i];
        w.ds = ch->ds;
        w.fh = ch->fh;
        w.offset = ch->offset;
        w.source = ch->data;
        w.at = 0;
        w.length = std::min<std::size_t>(ch->chunk, ch->data->size());
        w.stable = ch->how;
        w.deadline = fleet::deadline_in(ch->timeout);
    }
    const std::int64_t issued = wcc::monotonic_now_ns();
    bool all = true;
    fleet::DataServer::write_here(direct, [&](std::size_t i) {
        if (chains[i] != nullptr) {
            all = false;
            chains[i]->next();
        }
    });
    for (std::size_t i = 0; i < chains.size(); ++i)
        if (chains[i] != nullptr && direct[i].result)
            chains[i]->answered(std::move(*direct[i].result), issued);
    return all;
}

bool contains(const std::vector<std::uint32_t>& v, std::uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// Adds where a write's time went to the counters (counters.hpp): the parts of the mirror
// answered last, which is the one the worker waited for. Only for writes every mirror
// answered: a chain that timed out may still be running on its event thread.
void count_write_times(DataPathCounters& counters, fleet::Clock::time_point started,
                       fleet::Clock::time_point resumed,
                       const std::vector<std::shared_ptr<WriteChain>>& chains) {
    const fleet::CallTimes* last = nullptr;
    for (const auto& chain : chains) {
        if (chain == nullptr || chain->last_times.replied == fleet::Clock::time_point{})
            return; // a mirror not written, or with nothing to write: nothing to say
        if (last == nullptr || chain->last_times.replied > last->replied)
            last = &chain->last_times;
    }
    if (last == nullptr)
        return;
    auto ns = [](fleet::Clock::duration d) {
        return static_cast<std::uint64_t>(
            std::max<std::int64_t>(0, std::chrono::nanoseconds(d).count()));
    };
    DataPathCounters::add(counters.proxy_writes_timed);
    DataPathCounters::add(counters.proxy_write_queue_ns, ns(last->sent - last->submitted));
    DataPathCounters::add(counters.proxy_write_data_server_ns, ns(last->replied - last->sent));
    DataPathCounters::add(counters.proxy_write_wake_ns, ns(resumed - last->replied));
    DataPathCounters::add(counters.proxy_write_total_ns, ns(fleet::Clock::now() - started));
}

template <class T> bool wait_bounded(std::future<T>& f, fleet::Clock::time_point limit) {
    return f.wait_until(limit) == std::future_status::ready;
}

// The outcome of a write or truncate that went to every mirror (results[i] is
// map.files[i]'s): see proxy_io.hpp. Tells each failing data server.
DsStatus settle(StaleMirrors* registry, DataPathCounters& counters, const fleet::LogSink& log,
                const ObjectKey& key, const DataFileMap& map,
                const std::vector<std::uint32_t>& stale,
                std::vector<std::pair<Target*, DsStatus>>& results, const char* op) {
    DsStatus failed = first_failure(results);
    if (failed.ok())
        return failed;
    std::vector<std::uint32_t> missed;
    DsStatus first_missed;
    bool in_sync_took_it = false;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const std::uint32_t mirror = map.files[i].mirror;
        const DsStatus& st = results[i].second;
        if (contains(stale, mirror)) {
            if (!st.ok())
                DataPathCounters::add(counters.stale_mirror_errors);
            continue;
        }
        if (st.ok()) {
            in_sync_took_it = true;
        } else {
            missed.push_back(mirror);
            if (first_missed.ok())
                first_missed = st;
        }
    }
    if (missed.empty())
        return DsStatus::success(); // only stale mirrors failed
    if (registry == nullptr || !in_sync_took_it)
        return first_missed;
    const std::string reason = std::string(op) + " failed: " + first_missed.message;
    if (auto st = registry->mark(key, map.file_id, static_cast<std::uint32_t>(map.files.size()),
                                 missed, reason);
        !st.ok()) {
        DsStatus out = first_missed;
        out.message += "; and the mirror(s) that missed it could not be marked stale: " + st.error;
        return out;
    }
    DataPathCounters::add(counters.degraded_writes);
    DataPathCounters::add(counters.mirrors_marked_stale, missed.size());
    if (log) {
        std::string which;
        for (std::uint32_t m : missed)
            which += (which.empty() ? "" : ", ") + std::to_string(m);
        log(fleet::LogLevel::warn,
            "file " + std::to_string(map.file_id) + ": mirror(s) " + which + " missed a " + op +
                " the other mirror(s) took; marked stale (not read, not in layouts) until "
                "resilvered: " +
                first_missed.message);
    }
    return DsStatus::success();
}

} // namespace

ProxyIo::ProxyIo(fleet::Fleet& fleet, wcc::AttrCache* cache, DataPathCounters& counters,
                 std::map<std::uint64_t, IoSizes> sizes, std::chrono::milliseconds timeout,
                 StaleMirrors* stale, fleet::LogSink log, ExportWriteVerifier* verifier)
    : fleet_(fleet), cache_(cache), counters_(counters), sizes_(std::move(sizes)),
      timeout_(timeout), stale_(stale), log_(std::move(log)), verifier_(verifier) {}

std::vector<std::uint32_t> ProxyIo::stale_of(std::uint64_t file_id) const {
    return stale_ != nullptr ? stale_->of(file_id) : std::vector<std::uint32_t>{};
}

void ProxyIo::set_io_sizes(std::uint64_t ds_id, std::optional<IoSizes> sizes) {
    std::unique_lock lk(sizes_mu_);
    if (sizes)
        sizes_[ds_id] = *sizes;
    else
        sizes_.erase(ds_id);
}

std::uint32_t ProxyIo::rsize(std::uint64_t ds_id) const {
    std::shared_lock lk(sizes_mu_);
    auto it = sizes_.find(ds_id);
    return it == sizes_.end() || it->second.rsize == 0 ? IoSizes{}.rsize : it->second.rsize;
}

std::uint32_t ProxyIo::wsize(std::uint64_t ds_id) const {
    std::shared_lock lk(sizes_mu_);
    auto it = sizes_.find(ds_id);
    return it == sizes_.end() || it->second.wsize == 0 ? IoSizes{}.wsize : it->second.wsize;
}

std::vector<std::size_t> ProxyIo::read_order(const std::vector<fleet::Health>& health,
                                             std::uint64_t rotation) {
    std::vector<std::size_t> up, suspect, rest;
    for (std::size_t i = 0; i < health.size(); ++i) {
        if (health[i] == fleet::Health::up)
            up.push_back(i);
        else if (health[i] == fleet::Health::suspect)
            suspect.push_back(i);
        else
            rest.push_back(i);
    }
    if (!up.empty())
        std::rotate(up.begin(), up.begin() + static_cast<std::ptrdiff_t>(rotation % up.size()),
                    up.end());
    std::vector<std::size_t> order = up;
    order.insert(order.end(), suspect.begin(), suspect.end());
    order.insert(order.end(), rest.begin(), rest.end());
    return order;
}

DsStatus ProxyIo::write(const ObjectKey& key, const DataFileMap& map, std::uint64_t offset,
                        std::span<const std::uint8_t> data, fleet::StableHow how) {
    const auto started = fleet::Clock::now();
    DataPathCounters::add(counters_.proxy_writes);
    const WriteBracket bracket(stale_, map.file_id);
    const std::vector<std::uint32_t> stale = stale_of(map.file_id);
    if (map.files.empty()) {
        DataPathCounters::add(counters_.proxy_write_errors);
        return DsStatus::error(DsErrc::invalid_argument,
                               "file " + std::to_string(map.file_id) + " has no data files");
    }
    // The client's data is lent to the data servers' requests, not copied. The worker
    // closes it before it returns, whatever happened: a chunk not yet encoded by then (its
    // wait below ran out) is not sent.
    auto buffer = std::make_shared<fleet::WriteSource>(data);
    struct CloseAtReturn {
        fleet::WriteSource& source;
        ~CloseAtReturn() { source.close(); }
    } const close_at_return{*buffer};
    std::vector<Target> targets;
    targets.reserve(map.files.size());
    std::vector<std::shared_ptr<WriteChain>> chains(map.files.size());
    std::size_t chunks = 1;
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        const DataFile& df = map.files[i];
        targets.push_back(resolve(fleet_, map, df));
        Target& t = targets.back();
        if (!t.status.ok())
            continue;
        auto chain = std::make_shared<WriteChain>();
        chain->ds = t.ds;
        chain->fh = t.fh;
        chain->data = buffer;
        chain->offset = offset;
        chain->chunk = wsize(df.ds_id);
        chain->how = how;
        chain->verifier = verifier_;
        chain->ds_id = df.ds_id;
        chain->timeout = timeout_;
        // A stale mirror's attributes stay out of the merged view (stale_mirrors.hpp).
        chain->cache = contains(stale, df.mirror) ? nullptr : cache_;
        chain->key = cache_key(map, df);
        chunks = std::max<std::size_t>(chunks, (buffer->size() + chain->chunk - 1) / chain->chunk);
        chains[i] = chain;
    }
    if (data.empty()) { // nothing to send: each chain is done at once
        for (auto& chain : chains)
            if (chain != nullptr)
                chain->next();
    } else if (start_on_this_thread(chains)) {
        DataPathCounters::add(counters_.proxy_writes_direct);
    }
    const auto limit = fleet::Clock::now() + static_cast<long>(chunks) * timeout_ + 2s;
    std::vector<std::pair<Target*, DsStatus>> results;
    fleet::Clock::time_point resumed{};
    bool every_mirror_answered = true;
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        DsStatus st = targets[i].status;
        if (chains[i] != nullptr) {
            if (chains[i]->done.wait_until(limit)) {
                st = chains[i]->done.take();
                resumed = std::max(resumed, fleet::Clock::now());
            } else
                st = DsStatus::error(DsErrc::timeout, targets[i].ds->label() +
                                                          ": WRITE: no answer from the "
                                                          "data-server client");
            if (!st.ok())
                st = in_context(map, map.files[i], std::move(st));
        }
        every_mirror_answered = every_mirror_answered && st.ok();
        results.emplace_back(&targets[i], std::move(st));
    }
    DsStatus failed = settle(stale_, counters_, log_, key, map, stale, results, "WRITE");
    if (!failed.ok()) {
        DataPathCounters::add(counters_.proxy_write_errors);
        return failed;
    }
    DataPathCounters::add(counters_.proxy_bytes_written, buffer->size());
    if (every_mirror_answered)
        count_write_times(counters_, started, resumed, chains);
    return DsStatus::success();
}

ProxyReadResult ProxyIo::read(const DataFileMap& map, std::uint64_t offset,
                              std::span<std::uint8_t> into) {
    DataPathCounters::add(counters_.proxy_reads);
    ProxyReadResult out;
    if (map.files.empty()) {
        DataPathCounters::add(counters_.proxy_read_errors);
        out.status = DsStatus::error(DsErrc::invalid_argument,
                                     "file " + std::to_string(map.file_id) + " has no data files");
        return out;
    }
    // In-sync mirrors only (map.files indexes), healthiest first.
    const std::vector<std::uint32_t> stale = stale_of(map.file_id);
    std::vector<std::size_t> in_sync;
    std::vector<fleet::Health> health;
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        if (contains(stale, map.files[i].mirror))
            continue;
        auto ds = fleet_.find(map.files[i].ds_id);
        in_sync.push_back(i);
        health.push_back(ds ? ds->health() : fleet::Health::down);
    }
    std::vector<std::size_t> order;
    for (std::size_t k : read_order(health, rotation_.fetch_add(1, std::memory_order_relaxed)))
        order.push_back(in_sync[k]);

    DsStatus last;
    unsigned tried = 0;
    for (std::size_t idx : order) {
        const DataFile& df = map.files[idx];
        ++tried;
        Target t = resolve(fleet_, map, df);
        out.mirror = df.mirror;
        if (!t.status.ok()) {
            last = t.status;
            continue;
        }
        // Each chunk is read on this thread into the caller's buffer (read_here) when the
        // data server has a direct connection for it, else through its event thread, which
        // copies the reply into the buffer lent as `sink`. A fresh sink per mirror: one
        // given up on below is closed, and a late reply copies nothing.
        std::shared_ptr<fleet::ReadSink> sink;
        std::size_t got = 0;
        bool eof = false;
        DsStatus st;
        while (got < into.size()) {
            const auto len = static_cast<std::uint32_t>(
                std::min<std::size_t>(rsize(df.ds_id), into.size() - got));
            const std::int64_t issued = wcc::monotonic_now_ns();
            auto here = t.ds->read_here(t.fh, offset + got, into.subspan(got, len),
                                        fleet::deadline_in(timeout_));
            if (!here) {
                if (!sink)
                    sink = std::make_shared<fleet::ReadSink>(into);
                auto f = t.ds->read_into(t.fh, offset + got, len, sink, got,
                                         fleet::deadline_in(timeout_));
                if (!wait_bounded(f, fleet::Clock::now() + timeout_ + 2s)) {
                    sink->close();
                    st = DsStatus::error(DsErrc::timeout,
                                         t.ds->label() +
                                             ": READ: no answer from the data-server client");
                    break;
                }
                here = f.get();
            }
            auto& r = *here;
            if (!r.ok()) {
                st = std::move(r.status);
                break;
            }
            if (r.value.attrs && cache_ != nullptr)
                cache_->apply_ds_getattr(cache_key(map, df), to_cache_attrs(*r.value.attrs),
                                         issued);
            got += r.value.placed;
            if (r.value.eof || r.value.placed == 0) {
                eof = true;
                break;
            }
        }
        if (st.ok()) {
            if (tried > 1)
                DataPathCounters::add(counters_.proxy_read_fallbacks);
            DataPathCounters::add(counters_.proxy_bytes_read, got);
            out.count = got;
            out.eof = eof;
            out.status = DsStatus::success();
            return out;
        }
        t.ds->report_error(error_kind(st));
        last = in_context(map, df, std::move(st));
    }
    DataPathCounters::add(counters_.proxy_read_errors);
    out.status = last;
    out.status.message = "no mirror of file " + std::to_string(map.file_id) + " could be read (" +
                         std::to_string(tried) + " tried); last: " + last.message;
    return out;
}

DsStatus ProxyIo::commit(const DataFileMap& map, std::uint64_t offset, std::uint32_t count) {
    DataPathCounters::add(counters_.proxy_commits);
    std::vector<Target> targets;
    targets.reserve(map.files.size());
    std::vector<std::future<fleet::DsResult<fleet::CommitResult>>> pending(map.files.size());
    const std::int64_t issued = wcc::monotonic_now_ns();
    // Stale mirrors are neither read nor trusted: resilver copies them whole from an in-sync
    // mirror, so what they hold unstable needs no COMMIT.
    const std::vector<std::uint32_t> stale = stale_of(map.file_id);
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        targets.push_back(
            contains(stale, map.files[i].mirror) ? Target{} : resolve(fleet_, map, map.files[i]));
        if (targets.back().status.ok() && targets.back().ds)
            pending[i] = targets.back().ds->commit(targets.back().fh, offset, count,
                                                   fleet::deadline_in(timeout_));
    }
    const auto limit = fleet::Clock::now() + timeout_ + 2s;
    std::vector<std::pair<Target*, DsStatus>> results;
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        DsStatus st = targets[i].status;
        if (pending[i].valid()) {
            if (!wait_bounded(pending[i], limit)) {
                st = DsStatus::error(DsErrc::timeout, targets[i].ds->label() +
                                                          ": COMMIT: no answer from the "
                                                          "data-server client");
            } else {
                auto r = pending[i].get();
                if (r.ok() && r.value.attrs && cache_ != nullptr)
                    cache_->apply_ds_getattr(cache_key(map, map.files[i]),
                                             to_cache_attrs(*r.value.attrs), issued);
                if (r.ok() && verifier_ != nullptr)
                    verifier_->observe(map.files[i].ds_id, r.value.verifier);
                st = std::move(r.status);
            }
            if (!st.ok())
                st = in_context(map, map.files[i], std::move(st));
        }
        results.emplace_back(&targets[i], std::move(st));
    }
    DsStatus failed = first_failure(results);
    if (!failed.ok())
        DataPathCounters::add(counters_.proxy_commit_errors);
    return failed;
}

DsStatus ProxyIo::truncate(const ObjectKey& key, const DataFileMap& map, std::uint64_t size) {
    DataPathCounters::add(counters_.truncates);
    const WriteBracket bracket(stale_, map.file_id);
    const std::vector<std::uint32_t> stale = stale_of(map.file_id);
    std::vector<Target> targets;
    targets.reserve(map.files.size());
    std::vector<std::future<fleet::DsResult<fleet::SetattrResult>>> pending(map.files.size());
    fleet::SetAttrs attrs;
    attrs.size = size;
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        targets.push_back(resolve(fleet_, map, map.files[i]));
        if (targets.back().status.ok())
            pending[i] =
                targets.back().ds->setattr(targets.back().fh, attrs, fleet::deadline_in(timeout_));
    }
    const auto limit = fleet::Clock::now() + timeout_ + 2s;
    std::vector<std::pair<Target*, DsStatus>> results;
    std::vector<wcc::TruncatedDataFile> truncated;
    std::optional<wcc::NfsTime> newest_mtime;
    for (std::size_t i = 0; i < map.files.size(); ++i) {
        DsStatus st = targets[i].status;
        if (pending[i].valid()) {
            if (!wait_bounded(pending[i], limit)) {
                st = DsStatus::error(DsErrc::timeout, targets[i].ds->label() +
                                                          ": SETATTR: no answer from the "
                                                          "data-server client");
            } else {
                auto r = pending[i].get();
                if (r.ok() && !contains(stale, map.files[i].mirror)) {
                    wcc::TruncatedDataFile t;
                    t.slot = cache_key(map, map.files[i]).slot;
                    if (r.value.attrs) {
                        t.post_op = to_cache_attrs(*r.value.attrs);
                        if (t.post_op->has(wcc::kAttrMtime) &&
                            (!newest_mtime || *newest_mtime < t.post_op->mtime))
                            newest_mtime = t.post_op->mtime;
                    }
                    truncated.push_back(t);
                }
                st = std::move(r.status);
            }
            if (!st.ok())
                st = in_context(map, map.files[i], std::move(st));
        }
        results.emplace_back(&targets[i], std::move(st));
    }
    DsStatus failed = settle(stale_, counters_, log_, key, map, stale, results, "SETATTR(size)");
    if (!failed.ok()) {
        DataPathCounters::add(counters_.truncate_errors);
        return failed;
    }
    if (cache_ != nullptr)
        cache_->record_mds_setattr_size(map.file_id, size, newest_mtime, truncated);
    return DsStatus::success();
}

} // namespace flexfiles::mds
