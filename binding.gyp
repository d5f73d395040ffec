{
  "targets": [
    {
      "target_name": "smc_run",
      "sources": ["native/addon/addon.cc", "native/addon/socket.cc", "native/addon/netlink.cc", "native/addon/netns.cc", "native/addon/file_lock.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS", "_GNU_SOURCE"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-O2"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"]
    }
  ]
}
