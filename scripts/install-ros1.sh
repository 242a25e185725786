#!/usr/bin/env bash
# Install Debian's ROS 1 (Noetic-era `rosbag`, `rospy`, tf2 and message packages), only what is
# missing: the tests read twinsim's rosbag1 export back with these real ROS 1 tools, run by
# Debian's /usr/bin/python3 (twinsim itself never imports them).
set -euo pipefail

packages=(
  ros-core python3-rospy python3-rosbag python3-tf2-ros python3-rostopic
  python3-sensor-msgs python3-geometry-msgs python3-nav-msgs python3-tf2-msgs
)

need=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done

bash "$(dirname "$0")/apt-install.sh" "ROS 1 (rosbag, rospy, tf2_msgs, sensor_msgs for /usr/bin/python3)" "${need[@]}"
