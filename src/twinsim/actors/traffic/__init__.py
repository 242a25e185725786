"""Traffic on a town's lanes: vehicles as data, the IDM simulation with MOBIL lane changes and
overtakes, what each vehicle keeps clear of, and the keyframes it leaves in the scene."""
