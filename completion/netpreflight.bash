# SPDX-License-Identifier: MIT
# bash completion for netpreflight(1). One table of commands and their options;
# tests/pkg/completion.sh checks it against "netpreflight help", so an option added
# to a command without a line here fails the tests. A command missing from the table
# is still completed from its usage line in "netpreflight help".

_netpreflight()
{
	local cur prev words cword
	_init_completion || return

	local globals="--socket --sysfs-root --json --help --version"
	local -A cmd_opts=(
		[interfaces]="--json --capture --help"
		[rdma]="--json --sysfs-root --help"
		[check]="--nodes --timeout --max-timeout --job --settle --json --help"
		[key]="generate -o --json --help"
		[explain]="--nodes --no-daemon --max-age --timeout --node-env --verbose --json --help"
		[status]="--json --help"
		[env]="--nodes --format --job-wide --timeout --max-age --cached --job --json --help"
		[run]="--nodes --hostfile --job --timeout --max-timeout --standalone --port --key-file --node-name --json --help"
		[help]=""
		[version]=""
	)
	local formats="shell taskprolog nccl-conf json"

	# Options that take a value, wherever they stand.
	case $prev in
	--socket | --capture | --hostfile | -H | --key-file)
		_filedir
		return
		;;
	--sysfs-root)
		_filedir -d
		return
		;;
	--format | -f)
		COMPREPLY=($(compgen -W "$formats" -- "$cur"))
		return
		;;
	--nodes | -n)
		# Inside an allocation the job's own node list is the usual answer.
		[[ -n ${SLURM_JOB_NODELIST-} ]] &&
			COMPREPLY=($(compgen -W "$SLURM_JOB_NODELIST" -- "$cur"))
		return
		;;
	--timeout | --max-timeout | --max-age | --port | --node-name | -t | -a)
		return
		;;
	--job)
		# Inside an allocation the job's own id is the usual tag.
		[[ -n ${SLURM_JOB_ID-} ]] && COMPREPLY=($(compgen -W "$SLURM_JOB_ID" -- "$cur"))
		return
		;;
	esac

	# The command is the first word that is neither an option nor an option's value.
	local i cmd=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--socket | --sysfs-root | --capture | --format | --nodes | --timeout | --max-timeout | --max-age | --job | --hostfile | --port | --key-file | --node-name | -f | -n | -t | -a | -H)
			((i++))
			;;
		-*) ;;
		*)
			cmd=${words[i]}
			break
			;;
		esac
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$globals" -- "$cur"))
		else
			# The table's commands and any newer one "netpreflight help" lists.
			local cmds="${!cmd_opts[*]} $(command netpreflight help 2>/dev/null |
				sed -n 's/^  netpreflight \([a-z][a-z-]*\).*/\1/p')"
			COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		fi
		return
	fi
	# run ... -- CMD ARGS: complete CMD and its arguments as a command line of their own.
	if [[ $cmd == run ]]; then
		local j
		for ((j = i + 1; j < cword; j++)); do
			if [[ ${words[j]} == -- ]]; then
				_command_offset $((j + 1))
				return
			fi
		done
	fi
	local words_for_cmd
	if [[ -v cmd_opts[$cmd] ]]; then
		words_for_cmd=${cmd_opts[$cmd]}
	else
		# A command newer than this table: the words of its usage line in
		# "netpreflight help" (sub-words such as "generate", and the options).
		local line
		line=$(command netpreflight help 2>/dev/null | grep -m1 "^  netpreflight $cmd\b") || return
		words_for_cmd="$(grep -o -- '--[a-z][a-z-]*' <<<"$line")"
		[[ $line =~ ^\ \ netpreflight\ [a-z-]+\ ([a-z][a-z-]*) ]] &&
			words_for_cmd+=" ${BASH_REMATCH[1]}"
	fi
	if [[ $cur == --*=* ]]; then
		# --format=sh<TAB>
		if [[ $cur == --format=* ]]; then
			COMPREPLY=($(compgen -W "$formats" -- "${cur#--format=}"))
		fi
		return
	fi
	COMPREPLY=($(compgen -W "$words_for_cmd --socket" -- "$cur"))
} &&
	complete -F _netpreflight netpreflight
