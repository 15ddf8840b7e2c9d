// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/resilver.hpp"

#include "mds/reaper.hpp" // removal_backoff: the same backoff curve

#include <algorithm>
#include <future>

namespace flexfiles::mds {
namespace {

using namespace std::chrono_literals;
using fleet::DsStatus;

std::string where(const StaleMirror& m, const DataFile& df) {
    return "file " + std::to_string(m.file_id) + " mirror " + std::to_string(m.mirror) +
           " (data file " + df.name + " on data server " + std::to_string(df.ds_id) + ")";
}

// Waits for a data-server future, bounded: the fleet answers every request by its
// deadline, the margin covers a stuck event thread.
template <class T>
fleet::DsResult<T> await(std::future<fleet::DsResult<T>> f, std::chrono::milliseconds timeout,
                         const std::string& what) {
    if (f.wait_for(timeout + 2s) != std::future_status::ready) {
        fleet::DsResult<T> r;
        r.status = DsStatus::error(fleet::DsErrc::timeout,
                                   what + ": no answer from the data-server client");
        return r;
    }
    return f.get();
}

std::string duration_text(std::chrono::milliseconds d) {
    return d < 1s
               ? std::to_string(d.count()) + " ms"
               : std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

} // namespace

Resilverer::Resilverer(LayoutStore& store, StaleMirrors& stale, fleet::Fleet& fleet,
                       ResilverHooks hooks, ResilverSettings settings, fleet::LogSink log)
    : store_(store), stale_(stale), fleet_(fleet), hooks_(std::move(hooks)), settings_(settings),
      log_(std::move(log)), loop_(settings.tick, [this] { pass(); }) {}

Resilverer::~Resilverer() {
    stop();
}

void Resilverer::start() {
    loop_.start();
}

void Resilverer::stop() {
    loop_.stop();
}

void Resilverer::log(fleet::LogLevel level, const std::string& message) const {
    if (!log_)
        return;
    try {
        log_(level, "resilver: " + message);
    } catch (...) {
    }
}

ResilverCounters Resilverer::counters() const {
    ResilverCounters c;
    c.attempts = c_attempts_.load(std::memory_order_relaxed);
    c.resilvered = c_resilvered_.load(std::memory_order_relaxed);
    c.restarts = c_restarts_.load(std::memory_order_relaxed);
    c.failures = c_failures_.load(std::memory_order_relaxed);
    c.bytes_copied = c_bytes_.load(std::memory_order_relaxed);
    c.recalls = c_recalls_.load(std::memory_order_relaxed);
    return c;
}

void Resilverer::pass() {
    const auto now = std::chrono::steady_clock::now();
    for (const StaleMirror& mark : stale_.list()) {
        if (loop_.stopping())
            return;
        const auto id = std::make_pair(mark.file_id, mark.mirror);
        if (auto it = backoff_.find(id); it != backoff_.end() && it->second.due > now)
            continue;
        std::string why;
        switch (resilver(mark, &why)) {
        case ResilverOutcome::resilvered:
            backoff_.erase(id);
            waiting_logged_.erase(id);
            break;
        case ResilverOutcome::waiting:
            // Logged once per reason: a data server down for an hour is one line.
            if (auto [it, fresh] = waiting_logged_.try_emplace(id, why);
                fresh || it->second != why) {
                it->second = why;
                log(fleet::LogLevel::info, why);
            }
            break;
        case ResilverOutcome::restarted:
            break;
        case ResilverOutcome::failed: {
            Backoff& b = backoff_[id];
            ++b.failures;
            const auto delay =
                removal_backoff(b.failures, settings_.backoff_initial, settings_.backoff_max);
            b.due = std::chrono::steady_clock::now() + delay;
            log(fleet::LogLevel::warn,
                why + "; next attempt in " + std::to_string(delay.count()) + " ms");
            break;
        }
        }
    }
    // Marks that are gone (resilvered elsewhere, file removed) take their state with them.
    const auto marks = stale_.list();
    const auto gone = [&](const auto& kv) {
        return std::none_of(marks.begin(), marks.end(), [&](const StaleMirror& m) {
            return m.file_id == kv.first.first && m.mirror == kv.first.second;
        });
    };
    std::erase_if(backoff_, gone);
    std::erase_if(waiting_logged_, gone);
    std::erase_if(rw_waits_, gone);
}

void Resilverer::recall_when_waited_long(const StaleMirror& mark, std::string& reason) {
    const auto now = std::chrono::steady_clock::now();
    auto [it, fresh] =
        rw_waits_.try_emplace(std::make_pair(mark.file_id, mark.mirror), RwWait{now, now});
    RwWait& wait = it->second;
    const bool recalls = hooks_.recall_rw_layouts && settings_.recall_after.count() > 0;
    if (!fresh && recalls && now - wait.last_recall >= settings_.recall_after) {
        hooks_.recall_rw_layouts(mark);
        if (!wait.recalled)
            wait.first_recall_after =
                std::chrono::duration_cast<std::chrono::milliseconds>(now - wait.since);
        wait.recalled = true;
        wait.last_recall = now;
        c_recalls_.fetch_add(1, std::memory_order_relaxed);
    }
    // The same words on every pass of one wait: the waiting line is logged once.
    if (wait.recalled)
        reason += "; recalled them after " + duration_text(wait.first_recall_after) +
                  ", and again every " + duration_text(settings_.recall_after) +
                  " while they stay out";
}

ResilverOutcome Resilverer::resilver(const StaleMirror& mark, std::string* why) {
    std::string scratch;
    std::string& reason = why != nullptr ? *why : scratch;

    auto got = store_.get(mark.key);
    if (!got.ok()) {
        reason = "file " + std::to_string(mark.file_id) + ": " + got.status.error;
        c_failures_.fetch_add(1, std::memory_order_relaxed);
        return ResilverOutcome::failed;
    }
    if (!got.value || mark.mirror >= got.value->files.size()) {
        reason = "file " + std::to_string(mark.file_id) + " has no mirror " +
                 std::to_string(mark.mirror) + " any more";
        return ResilverOutcome::waiting;
    }
    const DataFileMap& map = *got.value;
    const DataFile& target_df = map.files[mark.mirror];
    const std::string target_name = where(mark, target_df);

    if (hooks_.rw_layout_outstanding && hooks_.rw_layout_outstanding(mark.file_id)) {
        reason = target_name + ": waiting for the file's RW layouts to be returned";
        recall_when_waited_long(mark, reason);
        return ResilverOutcome::waiting;
    }
    rw_waits_.erase({mark.file_id, mark.mirror});
    const std::optional<std::uint64_t> epoch = stale_.quiet_epoch(mark.file_id);
    if (!epoch) {
        reason = target_name + ": waiting for writes in flight";
        return ResilverOutcome::waiting;
    }
    auto target_ds = fleet_.find(target_df.ds_id);
    auto target_fh = fleet::DsFh::from_bytes(target_df.fh.data(), target_df.fh.size());
    if (!target_ds || !target_fh) {
        reason = target_name + ": its data server is not configured or its filehandle is bad";
        return ResilverOutcome::waiting;
    }
    if (target_ds->health() != fleet::Health::up) {
        reason = target_name + ": waiting for " + target_ds->label() + " to be Up";
        return ResilverOutcome::waiting;
    }
    if (settings_.close_stale_to_reads) {
        fleet::SetAttrs closed;
        closed.mode = kStaleDataFileMode;
        auto c = await(
            target_ds->setattr(*target_fh, closed, fleet::deadline_in(settings_.request_timeout)),
            settings_.request_timeout, target_ds->label() + ": SETATTR");
        if (!c.ok()) {
            reason = target_name + ": closing it to READ layouts failed: " + c.status.message;
            c_failures_.fetch_add(1, std::memory_order_relaxed);
            return ResilverOutcome::failed;
        }
    }
    std::optional<OtherWriters> others_before;
    if (hooks_.other_writers) {
        others_before = hooks_.other_writers(mark);
        if (!others_before->quiet) {
            reason = target_name + ": " + others_before->why;
            return ResilverOutcome::waiting;
        }
    }
    // The source: an in-sync mirror on an Up data server.
    const std::vector<std::uint32_t> stale = stale_.of(mark.file_id);
    const DataFile* source_df = nullptr;
    std::shared_ptr<fleet::DataServer> source_ds;
    for (const DataFile& df : map.files) {
        if (std::find(stale.begin(), stale.end(), df.mirror) != stale.end())
            continue;
        auto ds = fleet_.find(df.ds_id);
        if (ds && ds->health() == fleet::Health::up) {
            source_df = &df;
            source_ds = std::move(ds);
            break;
        }
    }
    std::optional<fleet::DsFh> source_fh;
    if (source_df != nullptr)
        source_fh = fleet::DsFh::from_bytes(source_df->fh.data(), source_df->fh.size());
    if (!source_fh) {
        reason = target_name + ": waiting for an in-sync mirror on an Up data server";
        return ResilverOutcome::waiting;
    }

    c_attempts_.fetch_add(1, std::memory_order_relaxed);
    const auto started = std::chrono::steady_clock::now();
    const auto timeout = settings_.request_timeout;
    auto failed = [&](const std::string& what, const DsStatus& st) {
        reason = target_name + ": copy from mirror " + std::to_string(source_df->mirror) +
                 " failed at " + what + ": " + st.message;
        c_failures_.fetch_add(1, std::memory_order_relaxed);
        return ResilverOutcome::failed;
    };
    auto moved_on = [&] {
        reason = target_name + ": the file was written while copying; copying again";
        c_restarts_.fetch_add(1, std::memory_order_relaxed);
        return ResilverOutcome::restarted;
    };

    auto attrs = await(source_ds->getattr(*source_fh, fleet::deadline_in(timeout)), timeout,
                       source_ds->label() + ": GETATTR");
    if (!attrs.ok())
        return failed("GETATTR of the source", attrs.status);
    const std::uint64_t size = attrs.value.size;
    const std::uint32_t chunk = std::max<std::uint32_t>(
        4096, hooks_.chunk_size ? hooks_.chunk_size(source_df->ds_id, target_df.ds_id) : 1u << 20);
    std::optional<fleet::WriteVerifier> verifier;
    std::uint64_t copied = 0;
    while (copied < size) {
        if (stale_.quiet_epoch(mark.file_id) != epoch)
            return moved_on();
        const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(chunk, size - copied));
        auto r = await(source_ds->read(*source_fh, copied, len, fleet::deadline_in(timeout)),
                       timeout, source_ds->label() + ": READ");
        if (!r.ok())
            return failed("READ of the source at " + std::to_string(copied), r.status);
        if (r.value.data.empty())
            break; // the source is shorter than its GETATTR said: SETATTR(size) below
        const std::size_t got_bytes = r.value.data.size();
        std::size_t done = 0;
        while (done < got_bytes) {
            std::vector<std::uint8_t> part(r.value.data.begin() + static_cast<std::ptrdiff_t>(done),
                                           r.value.data.end());
            auto w =
                await(target_ds->write(*target_fh, copied + done, std::move(part),
                                       fleet::StableHow::unstable, fleet::deadline_in(timeout)),
                      timeout, target_ds->label() + ": WRITE");
            if (!w.ok())
                return failed("WRITE at " + std::to_string(copied + done), w.status);
            if (w.value.count == 0)
                return failed("WRITE at " + std::to_string(copied + done),
                              DsStatus::error(fleet::DsErrc::rpc, "the server wrote 0 bytes"));
            if (verifier && *verifier != w.value.verifier)
                return failed("WRITE", DsStatus::error(fleet::DsErrc::rpc,
                                                       "the write verifier changed (the data "
                                                       "server restarted)"));
            verifier = w.value.verifier;
            done += w.value.count;
        }
        copied += got_bytes;
        c_bytes_.fetch_add(got_bytes, std::memory_order_relaxed);
    }
    if (verifier) {
        auto c = await(target_ds->commit(*target_fh, 0, 0, fleet::deadline_in(timeout)), timeout,
                       target_ds->label() + ": COMMIT");
        if (!c.ok())
            return failed("COMMIT", c.status);
        if (c.value.verifier != *verifier)
            return failed("COMMIT", DsStatus::error(fleet::DsErrc::rpc,
                                                    "the write verifier changed (the data server "
                                                    "restarted and lost unstable writes)"));
    }
    fleet::SetAttrs set;
    set.size = copied;
    set.atime = attrs.value.atime;
    set.mtime = attrs.value.mtime;
    // The copy reads and writes as any data file (data_files.hpp); one still closed to
    // READ layouts opens when the mark is gone.
    if (!settings_.close_stale_to_reads)
        set.mode = kDataFileMode;
    auto s = await(target_ds->setattr(*target_fh, set, fleet::deadline_in(timeout)), timeout,
                   target_ds->label() + ": SETATTR");
    if (!s.ok())
        return failed("SETATTR", s.status);

    if (hooks_.rw_layout_outstanding && hooks_.rw_layout_outstanding(mark.file_id))
        return moved_on();
    if (others_before) {
        const OtherWriters after = hooks_.other_writers(mark);
        if (!after.quiet || after.state != others_before->state)
            return moved_on();
    }
    auto cleared = stale_.clear_if_quiet(mark.key, mark.file_id, mark.mirror, *epoch);
    if (!cleared.ok()) {
        reason =
            target_name + ": copied, but the mark could not be cleared: " + cleared.status.error;
        c_failures_.fetch_add(1, std::memory_order_relaxed);
        return ResilverOutcome::failed;
    }
    if (!cleared.value)
        return moved_on();
    if (hooks_.cleared)
        hooks_.cleared(mark);
    if (settings_.close_stale_to_reads) {
        fleet::SetAttrs open;
        open.mode = kDataFileMode;
        auto o = await(target_ds->setattr(*target_fh, open, fleet::deadline_in(timeout)), timeout,
                       target_ds->label() + ": SETATTR");
        if (!o.ok()) // a READ layout's access error makes the MDS set the mode again
            log(fleet::LogLevel::warn, target_name +
                                           ": in sync, but its mode could not be "
                                           "set back for READ layouts: " +
                                           o.status.message);
    }
    c_resilvered_.fetch_add(1, std::memory_order_relaxed);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    reason = target_name + ": resilvered from mirror " + std::to_string(source_df->mirror) + " (" +
             std::to_string(copied) + " bytes in " + std::to_string(ms) + " ms); in sync again";
    log(fleet::LogLevel::info, reason);
    return ResilverOutcome::resilvered;
}

} // namespace flexfiles::mds
