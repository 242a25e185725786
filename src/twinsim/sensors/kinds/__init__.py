"""One module per built-in sensor kind (camera, imu, lidar, event_camera)."""
