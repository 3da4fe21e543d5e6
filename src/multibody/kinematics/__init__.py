"""Kinematics: forward kinematics, points, frames by name, Jacobians, J̇·q̇, centre of mass."""
from .forward import (BodyStates, body_states, forward_kinematics, frame_pose, point_acceleration,
                      point_position, point_velocity)
from .frames import frame_acceleration, frame_jacobian, frame_placement, frame_velocity
from .jacobians import (body_jacobian, center_of_mass, com_jacobian, com_velocity, jdot_qd, point_jacobian,
                        rotation_jacobian)

__all__ = ["BodyStates", "body_states", "forward_kinematics", "frame_pose", "point_position", "point_velocity",
           "point_acceleration", "body_jacobian", "point_jacobian", "rotation_jacobian", "jdot_qd",
           "center_of_mass", "com_jacobian", "com_velocity", "frame_placement", "frame_velocity",
           "frame_acceleration", "frame_jacobian"]
