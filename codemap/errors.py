"""The one exception for mistakes a user can fix."""


class CodemapError(Exception):
    """A problem with the user's input, files or options.

    The message names the file, sheet, row or column, says what is wrong and what to try.
    Only the CLI catches it: it prints the message on one line and exits with code 2.
    """
