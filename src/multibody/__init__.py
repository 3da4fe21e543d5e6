"""multibody: rigid multibody dynamics — spatial algorithms, symbolic equations of motion, simulation."""
