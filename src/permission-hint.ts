// The one wording of "this needs privilege" that every permission error ends with.
export const SUDO_HINT = 'run as root, e.g. with sudo';
