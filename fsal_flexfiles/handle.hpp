// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A FLEXFILES object handle wraps the sub-FSAL's handle of the same object.
// handle.cpp has the namespace operations, file.cpp the open/read/write/lock
// operations, xattrs.cpp the extended attributes: FSAL_NULL's split.
#pragma once

#include "cache/attr_cache.hpp"
#include "cache/rcu_published.hpp"
#include "export.hpp"
#include "ganesha/ganesha.hpp"
#include "layout/grants.hpp"
#include "model/data_files.hpp"
#include "store/layout_store.hpp"

#include <atomic>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>

namespace flexfiles {

struct Handle : fsal_obj_handle {
    // The sub-FSAL's handle; released with this one.
    fsal_obj_handle* sub = nullptr;
    // The export the handle was made for (it outlives its handles: MDCACHE
    // releases them before the export).
    Export* exp = nullptr;
    // The sub-FSAL's handle key (handle_to_key bytes): the layout store's key.
    mds::ObjectKey key;

    // A regular file's data files, one per mirror: loaded from the layout
    // store on first use and cached. nullptr for anything but a regular file,
    // and for a regular file without data files yet (see ensure in
    // data_path/data_path.hpp). Thread-safe; the map itself is immutable.
    std::shared_ptr<const mds::DataFileMap> data_files();
    // The same, read again where it may have changed behind this MDS: on a namespace
    // several MDSs share (Map_In_Namespace), another MDS may have fenced or resilvered
    // the file since. Used before handing out or fencing a layout; else data_files().
    std::shared_ptr<const mds::DataFileMap> current_data_files();
    // The same for GETATTR, without a lock or a reference: valid until the
    // caller's wcc::RcuReadLock ends. nullptr also when not loaded yet (ask
    // data_files()).
    const mds::DataFileMap* data_files_in_read_section() const noexcept {
        return map_loaded_.load(std::memory_order_acquire) ? map_.read() : nullptr;
    }
    // After the map changed in the store (placement, fencing): what later
    // data_files() calls return. nullptr: forget (the file was removed).
    void set_data_files(std::shared_ptr<const mds::DataFileMap> map);

    // A regular file's way into the export's attribute cache (cache/attr_cache.hpp):
    // attached by adopt(), detached by release(), which frees the handle a grace period
    // later because the cache's writers may still touch it until then.
    wcc::CacheAnchor cache_anchor;

    // layout::GrantRegistry::writes_unseen() of this file, kept by the registry
    // (layoutget, layoutreturn, the GETATTR fallback, removal): GETATTR reads
    // it with one load. True until adopt() asks the registry.
    layout::UnseenFlag writes_unseen{true};

    // The namespace attributes the data attributes are overlaid on, as the
    // sub-FSAL last gave them (every getattrs): ctime in ns since the epoch
    // (kNotSeen until then) and the change attribute. A LAYOUT_WCC starts
    // from them to tell MDCACHE the file's new attributes.
    static constexpr std::int64_t kNotSeen = INT64_MIN;
    std::atomic<std::int64_t> namespace_ctime_ns{kNotSeen};
    std::atomic<std::uint64_t> namespace_change{0};

    // Until when (Unix ms) this MDS's write lease on the file (data_path/namespace_marks.cpp)
    // runs, as this MDS last wrote it: 0 until the first write on a shared namespace.
    std::atomic<std::int64_t> write_lease_until_ms{0};

    // Serialises placement for this object (two writers of a file without
    // data files must not both place them).
    std::mutex placement_mu;

    static Handle* of(fsal_obj_handle* obj) noexcept { return static_cast<Handle*>(obj); }
    static const Handle* of(const fsal_obj_handle* obj) noexcept {
        return static_cast<const Handle*>(obj);
    }

private:
    // mds::load_map, counting and logging a failure.
    mds::StoreResult<std::optional<mds::DataFileMap>> load_map_logged();

    std::mutex load_mu_; // one load from the store at a time
    std::atomic<bool> map_loaded_{false};
    wcc::RcuPublished<mds::DataFileMap> map_;
};

// The sub-FSAL handle inside a FLEXFILES handle; nullptr for nullptr.
inline fsal_obj_handle* sub_of(fsal_obj_handle* obj) noexcept {
    return obj != nullptr ? Handle::of(obj)->sub : nullptr;
}

} // namespace flexfiles
