// SPDX-License-Identifier: LGPL-3.0-or-later
#include "pnfs/mds_access.hpp"

#include "data_path/data_path.hpp"
#include "export.hpp"
#include "handle.hpp"

namespace flexfiles::layout::mds_access {

fleet::Fleet* fleet(Export& exp) noexcept {
    return exp.fleet_.get();
}

wcc::AttrCache* cache(Export& exp) noexcept {
    return exp.cache_.get();
}

namespace {

// A copy of the map `load` (a Handle member) gives, or nullopt (none, or it threw).
std::optional<mds::DataFileMap>
copy_of(Handle& handle, std::shared_ptr<const mds::DataFileMap> (Handle::*load)()) noexcept {
    try {
        const std::shared_ptr<const mds::DataFileMap> map = (handle.*load)();
        return map ? std::optional<mds::DataFileMap>(*map) : std::nullopt;
    } catch (...) {
        return std::nullopt;
    }
}

} // namespace

std::optional<mds::DataFileMap> data_files(Export&, Handle& handle) noexcept {
    return copy_of(handle, &Handle::data_files);
}

std::optional<mds::DataFileMap> current_data_files(Export&, Handle& handle) noexcept {
    return copy_of(handle, &Handle::current_data_files);
}

mds::StoreResult<std::optional<mds::DataFileMap>>
map_of_mark(Export& exp, const mds::RwGrantMark& mark) noexcept {
    return mds::load_map_by_handle(exp, mark.key, mark.handle);
}

mds::StoreStatus record_map_of_mark(Export& exp, const mds::RwGrantMark& mark,
                                    const mds::DataFileMap& map) noexcept {
    return mds::record_map_by_handle(exp, mark.key, mark.handle, map);
}

std::vector<std::uint8_t> mark_handle(Export& exp, Handle& handle) noexcept {
    return mds::map_in_namespace(exp) ? mds::host_handle_of(exp, handle.sub)
                                      : std::vector<std::uint8_t>{};
}

bool shared_namespace(const Export& exp) noexcept {
    return mds::map_in_namespace(exp);
}

bool mark_namespace_writer(Export& exp, Handle& handle, std::string& error) noexcept {
    return mds::mark_namespace_writer(exp, handle.sub, error);
}

std::vector<std::string> other_namespace_writers(Export& exp, Handle& handle) noexcept {
    return mds::other_namespace_writers(exp, handle.sub);
}

void clear_namespace_writers(Export& exp, Handle& handle,
                             const std::vector<std::string>& marks) noexcept {
    mds::clear_namespace_writers(exp, handle.sub, marks);
}

void clear_namespace_writers_by_handle(Export& exp, const std::vector<std::uint8_t>& host,
                                       const std::vector<std::string>& marks) noexcept {
    mds::clear_namespace_writers_by_handle(exp, host, marks);
}

std::vector<std::uint32_t> mirrors_to_leave_out(Export& exp, std::uint64_t file_id,
                                                bool read_write) noexcept {
    try {
        return exp.stale_ ? exp.stale_->for_layout(file_id, read_write)
                          : std::vector<std::uint32_t>{};
    } catch (...) {
        return {};
    }
}

mds::FenceRetrier* fence_retrier(Export& exp) noexcept {
    return exp.fence_retry_.get();
}

std::vector<std::uint32_t> stale_mirrors(Export& exp, std::uint64_t file_id) noexcept {
    try {
        return exp.stale_ ? exp.stale_->of(file_id) : std::vector<std::uint32_t>{};
    } catch (...) {
        return {};
    }
}

bool mark_mirror_stale(Export& exp, Handle& handle, std::uint32_t mirror, std::uint64_t reporter,
                       const std::string& reason, std::string& error) noexcept {
    return mark_mirrors_stale(exp, handle, {mirror}, reporter, reason, error);
}

namespace {

// The registry's mark; `published` then puts fresh marks on the namespace object.
template <class Publish>
bool mark_then_publish(Export& exp, const mds::ObjectKey& key, const mds::DataFileMap& map,
                       const std::vector<std::uint32_t>& mirrors, std::uint64_t reporter,
                       const std::string& reason, std::string& error, Publish published) {
    try {
        if (!exp.stale_) {
            error = "the export has no stale-mirror registry";
            return false;
        }
        const mds::StoreStatus st =
            exp.stale_->mark(key, map.file_id, static_cast<std::uint32_t>(map.files.size()),
                             mirrors, reason, reporter);
        error = st.error;
        if (!st.ok())
            return false;
        return !mds::map_in_namespace(exp) || published(error);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

} // namespace

bool mark_mirrors_stale(Export& exp, Handle& handle, const std::vector<std::uint32_t>& mirrors,
                        std::uint64_t reporter, const std::string& reason,
                        std::string& error) noexcept {
    const std::shared_ptr<const mds::DataFileMap> map = handle.data_files();
    if (!map) {
        error = "the file has no data files";
        return false;
    }
    return mark_then_publish(
        exp, handle.key, *map, mirrors, reporter, reason, error, [&](std::string& why) {
            return mds::publish_stale_marks(exp, handle.sub, handle.key, *map, mirrors, why);
        });
}

bool mark_mirrors_stale(Export& exp, const mds::ObjectKey& key, const mds::DataFileMap& map,
                        const std::vector<std::uint32_t>& mirrors, std::uint64_t reporter,
                        const std::string& reason, std::string& error,
                        const std::vector<std::uint8_t>& host) noexcept {
    return mark_then_publish(
        exp, key, map, mirrors, reporter, reason, error, [&](std::string& why) {
            return mds::publish_stale_marks_by_handle(exp, host, key, map, mirrors, why);
        });
}

bool set_data_files(Export& exp, Handle& handle, const mds::DataFileMap& map,
                    std::string& error) noexcept {
    try {
        if (!exp.store_) {
            error = "the export has no layout store";
            return false;
        }
        const mds::StoreStatus st = exp.store_->put(handle.key, map);
        if (!st.ok()) {
            error = st.error;
            return false;
        }
        if (mds::map_in_namespace(exp) &&
            FSAL_IS_ERROR(mds::publish_map(exp, handle.sub, map, false, error)))
            return false;
        handle.set_data_files(std::make_shared<const mds::DataFileMap>(map));
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

} // namespace flexfiles::layout::mds_access
