"""The warm Snakemake of tests/snakemake_runner.py, run as a script (one per test process).

It imports Snakemake's command line and collects its plugins (each plugin registry is a singleton that
keeps what it collected) once, then serves runs: for each request, one JSON line on standard input
(``arguments``, ``cwd``, ``env``, ``stdout``, ``stderr``), it forks; the fork becomes what ``python -m
snakemake ARGUMENTS`` would be in that folder and environment and exits with its status. The server answers
with two JSON lines: the fork's process ID at once, then its exit status (negative: the signal that ended
it, as ``subprocess`` reports it). It ends when its standard input closes.
"""

import atexit
import json
import os
import sys
import traceback

from snakemake import cli, workflow

cli.get_argument_parser()  # the plugins, collected once
MAIN = os.path.join(os.path.dirname(cli.__file__), "__main__.py")


def _become_the_run(request: dict) -> int:
    """In the fork: the run's session, folder, environment, arguments and standard streams, then
    Snakemake's ``main``; returns its exit status."""
    os.setsid()  # a process group of its own: a timeout stops the run and every job it started
    os.chdir(request["cwd"])
    # Snakemake records the working directory when it is imported (`Workflow._rundir`, its header's "Run
    # directory"): the run's folder, as in a process started there
    workflow.Workflow._rundir = os.path.abspath(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    for descriptor, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, descriptor)
        os.close(target)
    sys.argv = [MAIN, *request["arguments"]]
    sys.path[0] = request["cwd"]  # `python -m` puts the working directory first
    try:
        cli.main(request["arguments"])
    except SystemExit as end:
        code = end.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def serve() -> None:
    answers = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                status = _become_the_run(request)
            except BaseException:
                traceback.print_exc()
            finally:
                atexit._run_exitfuncs()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        answers.write(json.dumps({"pid": pid}) + "\n")
        answers.flush()
        _, wait_status = os.waitpid(pid, 0)
        answers.write(json.dumps({"status": os.waitstatus_to_exitcode(wait_status)}) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve()
