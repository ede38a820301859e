"""The checks of the rooms that declare a Program (scalebench.room: STREAM's), one per room and all alike:
the plan's job runs the stack's program with the plan's arguments, and the room's outcome reads what it
printed. Sanity is the outcome's problems, the perf variables its figures, the loggable variables what
it records; the parameters, knobs and provenance fields are the room's and the data files'.
"""
import reframe as rfm
from reframe.core.builtins import run_after, sanity_function
from reframe.core.meta import make_test

from scalebench import room
from scalebench.rooms import ROOMS
from scalebench.programs import missing_binary, resolve_binary

from .base import ScalebenchCheck, knob_variables, planned_test, recorded


class RoomCheck(rfm.RunOnlyRegressionTest, ScalebenchCheck):
    """A room's check, made below for each room with a Program (its `room_program`)."""

    room_program = None

    @run_after('setup')
    def set_executable(self):
        program = self.room_program
        binary = self.stack_spec().extras.get(program.stack_key, program.default)
        missing = missing_binary(binary, program.stack_key)
        self.skip_if(bool(missing) and not self.is_dry_run(), missing)
        self.launch_program(resolve_binary(binary), list(self.case_plan.args))

    def parse_outputs(self, read):
        return self.room_program.outcome(room.JobOutput(
            read(self.job.stdout), self.num_nodes, self.num_tasks, self.num_cpus_per_task, tuple(self.case_plan.args),
            dict(self.partition_spec().extras)))

    @sanity_function
    def validate(self):
        return self.assert_result(lambda outcome: [(not outcome.problems, '; '.join(outcome.problems))])

    def record(self, outcome):
        for name, value in outcome.recorded.items():
            setattr(self, name, value)

    def figures(self, outcome):
        return outcome.figures


def _room_check(found):
    program = found.program
    knobs = (knob_variables(found.settings),) if found.settings else ()
    body = {'descr': program.descr, 'room_program': program, 'output_description': program.output_description}
    return planned_test(make_test(program.check, (RoomCheck, recorded(program.check), *knobs), body,
                                  module=__name__))


ROOM_CHECKS = [_room_check(found) for found in ROOMS if found.program is not None]
