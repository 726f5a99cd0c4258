//! Every integration test, one module per topic (`tests/TOPIC.rs`), in one test binary.
//!
//! One binary instead of one per file: the crate's generic code is compiled and linked once
//! rather than 75 times, and the test harness spreads all the tests over the machine's
//! threads instead of running the files one after another (where the longest file holds a
//! core alone while the other idles). Run one topic with its module path as the filter,
//! `cargo test --release --test suite calibrate::`. The two allocation-counting tests
//! (`rigid_no_alloc`, `rigid_jacobian_no_alloc`) stay binaries of their own: their global
//! allocator counts every thread's allocations, so nothing else may run beside them.

// Helpers shared by several topics.
mod cli_support;
mod diff_support;
mod mesh_match;
mod real_meshes;
mod rigid_support;
mod scene_support;
mod slab_ncp;
mod trial_support;
mod view_support;

// The topics.
mod actuator_drives;
mod actuators;
mod body_contact;
mod cable_bounds;
mod calibrate;
mod calibrate_trials;
mod cantilever;
mod cavity_surface;
mod cli_dynamics;
mod cli_jobs;
mod cli_simulate;
mod command_inputs;
mod command_sensitivity;
mod contact_acceleration;
mod contact_edge;
mod contact_factored;
mod contact_flat_face;
mod contact_ncp;
mod contact_obstacles;
mod contact_polish;
mod contact_scene;
mod contact_screen;
mod contact_small_ball;
mod contact_small_capsule;
mod contact_surface;
mod contact_surface_pairs;
mod control;
mod control_convergence;
mod control_tracking;
mod diff_body_contact;
mod diff_contact;
mod diff_damping_density;
mod diff_flat_face;
mod diff_self_contact;
mod diff_servo;
mod diff_small_ball;
mod diff_step;
mod doc_examples;
mod embedded_points;
mod examples_run;
mod factored_delassus;
mod fem;
mod finger_mesh;
mod grasp;
mod gripper_touching;
mod info_counts;
mod joint_control;
mod layering;
mod markers;
mod material_laws;
mod material_regions;
mod mixed_jobs;
mod mixed_scenes;
mod mixed_step_derivative;
mod msh_reader;
mod optimize;
mod out_folder;
mod pd_target;
mod pneunet_mesh;
mod reduced_model;
mod reliability;
mod rigid_complementarity;
mod rigid_consistency;
mod rigid_derivatives;
mod rigid_jobs;
mod rigid_mass_friction;
mod rigid_pendulum;
mod rigid_real_robots;
mod rigid_scene_io;
mod rigid_scenes;
mod rigid_step_derivative;
mod rigid_urdf;
mod run_report;
mod settling;
mod soak;
mod sofa_corotational;
mod softrobots_scenes;
mod static_derivative;
mod trajectory_loss;
mod trial_inputs;
mod trunk_mesh;
mod uniform_mass;
mod user_defaults;
mod view;
mod view_context;
mod view_stress;
mod vtk_readers;
